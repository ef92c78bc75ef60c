//! The renderer against OpenCV and the committed fixture set: rendered pieces sit
//! where OpenCV's own `projectPoints` puts them, the fixtures' truth agrees with
//! the foundation's call functions, and the set regenerates byte for byte.

use boardcall::board::Layout;
use boardcall::calls::{self, WasherPose};
use boardcall::camera::{Camera, Distortion};
use boardcall::fixture::{self, Fixture};
use boardcall::geom::{BoardPoint3, Footprint};
use boardcall::piece::{PieceId, PieceKind, Team};
use boardcall::render::generate::{plan_set, GenerateConfig};
use boardcall::render::scene::{piece_radius, piece_thickness, Appearance, CameraSpec, Effects, Light, PieceSpec, PoseSpec, Scene, SCENE_FORMAT};
use boardcall::render::shade::{render_linear, LinearImage, STEEL_ALBEDO};
use boardcall::render::truth::{cap_edge_points, PieceCall};
use opencv::core::{Mat, Point2d, Point3d, Vector};
use std::path::{Path, PathBuf};

/// The requirement: each cap edge within 0.5 px of where OpenCV projects it.
const EDGE_TOLERANCE_PX: f64 = 0.5;
/// Cap-edge points checked per piece.
const EDGE_POINTS: usize = 16;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes")
}

fn piece(id: PieceId, kind: PieceKind, x: f64, y: f64, z: Option<f64>, tilt: f64, towards: f64) -> PieceSpec {
    PieceSpec { id, kind, x_mm: x, y_mm: y, z_mm: z, tilt_deg: tilt, tilt_towards_deg: towards }
}

/// A clean (noise-free, 4x4 supersampled) scene seen by a tilted, rotated, strongly
/// distorted camera.
fn clean_scene(board: &str, pieces: Vec<PieceSpec>, target: BoardPoint3, k1: f64) -> Scene {
    let (tilt, azimuth, yaw) = (18f64.to_radians(), 2.2f64, 0.7f64);
    let dist = 1300.0;
    Scene {
        format: SCENE_FORMAT,
        board: board.into(),
        foul_line: Default::default(),
        construction: None,
        camera: CameraSpec {
            intrinsics: Camera {
                image_width: 800,
                image_height: 600,
                fx: 820.0,
                fy: 818.5,
                cx: 404.2,
                cy: 296.9,
                distortion: Distortion::brown(k1, 0.05, 0.0008, -0.0006, 0.0),
            },
            pose: PoseSpec::LookAt {
                position: BoardPoint3::new(
                    target.x_mm + dist * tilt.sin() * azimuth.cos(),
                    target.y_mm + dist * tilt.sin() * azimuth.sin(),
                    dist * tilt.cos(),
                ),
                target,
                up: [yaw.cos(), yaw.sin(), 0.0],
            },
        },
        pieces,
        // A point light and untextured wood: the measurement sees geometry, not grain or penumbra noise.
        lights: vec![Light { position: BoardPoint3::new(target.x_mm + 300.0, target.y_mm - 200.0, 1800.0), intensity: 2.0, radius_mm: 0.0, kelvin: 5000.0 }],
        appearance: Appearance { specular: 0.05, wood_grain: 0.0, paint_wear: 0.0, ..Appearance::default() },
        effects: Effects::clean(),
        supersample: 4,
        seed: 1,
        tags: vec![],
    }
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn project_with_opencv(cam: &Camera, rvec: [f64; 3], tvec: [f64; 3], pts: &[BoardPoint3]) -> Vec<(f64, f64)> {
    let obj: Vector<Point3d> = pts.iter().map(|p| Point3d::new(p.x_mm, p.y_mm, p.z_mm)).collect();
    let rv = Mat::from_slice_2d(&[[rvec[0]], [rvec[1]], [rvec[2]]]).unwrap();
    let tv = Mat::from_slice_2d(&[[tvec[0]], [tvec[1]], [tvec[2]]]).unwrap();
    let mut out: Vector<Point2d> = Vector::new();
    opencv::calib3d::project_points_def(&obj, &rv, &tv, &cam.camera_matrix_mat().unwrap(), &cam.dist_coeffs_mat().unwrap(), &mut out).unwrap();
    out.iter().map(|p| (p.x, p.y)).collect()
}

/// Bilinear sample of `f(pixel)` at OpenCV pixel coordinates (pixel centres on integers).
fn sample(img: &LinearImage, f: &dyn Fn([f32; 3]) -> f64, u: f64, v: f64) -> Option<f64> {
    let (i, j) = (u.floor(), v.floor());
    if i < 0.0 || j < 0.0 || i + 1.0 >= img.width as f64 || j + 1.0 >= img.height as f64 {
        return None;
    }
    let (a, b) = (u - i, v - j);
    let at = |x: usize, y: usize| f(img.pixels[y * img.width as usize + x]);
    let (x, y) = (i as usize, j as usize);
    Some((1.0 - a) * (1.0 - b) * at(x, y) + a * (1.0 - b) * at(x + 1, y) + (1.0 - a) * b * at(x, y + 1) + a * b * at(x + 1, y + 1))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Where, along the ray from `centre` through `edge` (pixels), the rendered signal
/// crosses halfway between its level inside and outside the cap; as a signed
/// offset in pixels from `edge`.
fn measured_edge_offset(img: &LinearImage, f: &dyn Fn([f32; 3]) -> f64, centre: (f64, f64), edge: (f64, f64)) -> Option<f64> {
    let (dx, dy) = (edge.0 - centre.0, edge.1 - centre.1);
    let n = dx.hypot(dy);
    let (ux, uy) = (dx / n, dy / n);
    let at = |s: f64| sample(img, f, edge.0 + ux * s, edge.1 + uy * s);
    // Levels 2 px and more from the edge: beyond the pixel footprint and the bilinear kernel.
    let inside = median((0..=8).map(|k| at(-2.0 - 0.25 * k as f64)).collect::<Option<Vec<_>>>()?);
    let outside = median((0..=6).map(|k| at(2.0 + 0.25 * k as f64)).collect::<Option<Vec<_>>>()?);
    let mid = (inside + outside) / 2.0;
    let step = 0.02;
    let mut prev = at(-2.0)?;
    let mut s = -2.0;
    while s < 2.0 {
        let next = at(s + step)?;
        if (prev - mid) * (next - mid) <= 0.0 && prev != next {
            return Some(s + step * (prev - mid) / (prev - next));
        }
        prev = next;
        s += step;
    }
    None
}

fn check_edges(scene: Scene) {
    let ls = scene.validate("test scene").unwrap();
    let img = render_linear(&ls, 2);
    let cam = ls.scene.camera.intrinsics;
    let (rvec, tvec) = (ls.pose.rvec(), ls.pose.translation);
    let wood = ls.scene.appearance.wood_colour;
    let mut worst: f64 = 0.0;
    let mut checked = 0;
    for p in &ls.scene.pieces {
        let edge = cap_edge_points(&ls.board, p, EDGE_POINTS);
        let h = piece_thickness(&ls.board, p.kind).unwrap();
        let c = p.centre(h);
        let axis = p.axis();
        let top = BoardPoint3::new(c.x_mm + axis[0] * h / 2.0, c.y_mm + axis[1] * h / 2.0, c.z_mm + axis[2] * h / 2.0);
        let mut pts = vec![top];
        pts.extend(edge);
        let px = project_with_opencv(&cam, rvec, tvec, &pts);
        // A signal that is high on the cap and low around it.
        // Linear in the colour, so a pixel's value is linear in how much of it the cap covers.
        let f: Box<dyn Fn([f32; 3]) -> f64> = match (p.kind, p.id.team) {
            // Blind to the wood and to the steel side whatever their lighting (the colour
            // orthogonal to both), so the cap stands out against either.
            (PieceKind::Weight, team) => {
                let blind = cross(wood, STEEL_ALBEDO);
                let cap = if team == Some(Team::Red) { ls.scene.appearance.red_colour } else { ls.scene.appearance.blue_colour };
                let sign = dot(blind, cap).signum();
                Box::new(move |c: [f32; 3]| sign * dot(blind, [c[0] as f64, c[1] as f64, c[2] as f64]))
            }
            (_, Some(Team::Red)) => Box::new(|c: [f32; 3]| (c[0] - c[1]) as f64),
            (_, Some(Team::Blue)) => Box::new(|c: [f32; 3]| (c[2] - c[0]) as f64),
            (_, None) => Box::new(|c: [f32; 3]| (c[0] + c[1] + c[2]) as f64),
        };
                let cam_centre = ls.pose.centre();
        for (k, e) in px[1..].iter().enumerate() {
            // Washers and discs are one material top and side: where the camera sees the
            // side face below the cap edge, the edge between them has no contrast, so only
            // the outline where the cap edge is the silhouette is measured. A weight's
            // coloured cap stands out from its steel side all round.
            let q = pts[k + 1];
            let outward = [q.x_mm - top.x_mm, q.y_mm - top.y_mm, q.z_mm - top.z_mm];
            let to_cam = [cam_centre.x_mm - q.x_mm, cam_centre.y_mm - q.y_mm, cam_centre.z_mm - q.z_mm];
            let side_seen = outward[0] * to_cam[0] + outward[1] * to_cam[1] + outward[2] * to_cam[2] > 0.0;
            if side_seen && p.kind != PieceKind::Weight {
                continue;
            }
            checked += 1;
            let off = measured_edge_offset(&img, &*f, px[0], *e)
                .unwrap_or_else(|| panic!("{}: no edge found near cap-edge point {k} at {e:?}", p.id));
            worst = worst.max(off.abs());
            assert!(off.abs() <= EDGE_TOLERANCE_PX, "{} ({:?} on {}): cap-edge point {k} rendered {off:.3} px from OpenCV's {e:?}", p.id, p.kind, ls.board.name);
        }
    }
    // At least the silhouette half of every piece's outline was measured.
    assert!(checked >= ls.scene.pieces.len() * EDGE_POINTS / 2 - 2, "only {checked} edge points measured");
    eprintln!("{}: worst cap-edge offset {worst:.3} px over {checked} points", ls.board.name);
}

#[test]
fn rendered_weights_sit_where_opencv_projects_them() {
    let r = |n| PieceId::of_team(Team::Red, n);
    let b = |n| PieceId::of_team(Team::Blue, n);
    let pieces = vec![
        piece(r(1), PieceKind::Weight, -120.0, 90.0, None, 0.0, 0.0),
        piece(b(1), PieceKind::Weight, 60.0, 215.0, None, 0.0, 0.0),
        // A hanger over the end, and one in the gutter.
        piece(r(2), PieceKind::Weight, 150.0, 20.0, None, 0.0, 0.0),
        piece(b(2), PieceKind::Weight, -292.0, 330.0, Some(-38.1 + 12.5), 0.0, 0.0),
        piece(b(3), PieceKind::Weight, -60.0, 380.0, None, 0.0, 0.0),
    ];
    check_edges(clean_scene("shuffleboard-22ft", pieces, BoardPoint3::new(0.0, 220.0, 0.0), -0.22));
}

#[test]
fn rendered_washers_sit_where_opencv_projects_them_flat_and_tilted() {
    let r = |n| PieceId::of_team(Team::Red, n);
    let b = |n| PieceId::of_team(Team::Blue, n);
    let pieces = vec![
        piece(r(1), PieceKind::Washer, -110.0, 320.0, None, 0.0, 0.0),
        piece(b(1), PieceKind::Washer, 120.0, 400.0, None, 0.0, 0.0),
        piece(r(2), PieceKind::Washer, 100.0, 650.0, Some(15.0), 20.0, 60.0),
        piece(b(2), PieceKind::Washer, -90.0, 700.0, Some(12.0), 14.0, 200.0),
    ];
    check_edges(clean_scene("holeyboard", pieces, BoardPoint3::new(0.0, 508.0, 0.0), 0.04));
}

#[test]
fn rendered_discs_sit_where_opencv_projects_them() {
    let pieces = vec![
        piece(PieceId::disc(1), PieceKind::Disc, -150.0, 50.0, None, 0.0, 0.0),
        piece(PieceId::disc(2), PieceKind::Disc, 52.0, 46.0, None, 0.0, 0.0),
        piece(PieceId::disc(3), PieceKind::Disc, 60.0, 240.0, None, 0.0, 0.0),
        piece(PieceId::disc(4), PieceKind::Disc, -80.0, 300.0, None, 0.0, 0.0),
    ];
    check_edges(clean_scene("sjoelbak", pieces, BoardPoint3::new(0.0, 170.0, 0.0), -0.15));
}

fn committed() -> Vec<Fixture> {
    fixture::list(&fixtures_dir()).unwrap().iter().map(|d| Fixture::load(d).unwrap()).collect()
}

#[test]
fn the_committed_set_is_complete_and_hard_enough() {
    let set = committed();
    assert!(set.len() >= 60, "{} fixtures", set.len());
    for board in ["shuffleboard-22ft", "sjoelbak", "holeyboard", "yocu-4", "yocu-9"] {
        assert!(set.iter().any(|f| f.truth.board == board), "no fixture of {board}");
    }
    let hard = set.iter().filter(|f| f.truth.tags.iter().any(|t| t == "hard")).count();
    assert!(3 * hard >= set.len(), "{hard} hard cases of {}", set.len());
    let mut bytes = 0;
    for f in &set {
        let (w, h) = image::image_dimensions(f.image_path()).unwrap();
        assert!(w >= 1280 && h >= 960, "{}: {w}x{h}", f.dir.display());
        assert_eq!((w, h), (f.truth.image_width, f.truth.image_height));
        bytes += std::fs::metadata(f.image_path()).unwrap().len();
        let scene = f.scene().unwrap();
        assert_eq!(scene.scene.camera.intrinsics, f.camera, "{}: camera.yaml differs from the scene", f.dir.display());
        assert!(f.truth.pieces.iter().all(|p| p.in_frame), "{}: a piece outside the frame", f.dir.display());
        assert!(f.truth.camera.tilt_deg <= 25.0 + 1e-9);
        let k1 = f.camera.distortion.as_brown().expect("the fixtures use OpenCV's standard model").k1;
        assert!((-0.25..=0.05).contains(&k1), "{k1}");
    }
    // Keep the repository modest: the issue asks for well under 40 MB.
    assert!(bytes < 40_000_000, "{bytes} bytes of images");
}

/// Margins are computed by the same functions from the same decimal inputs; 1e-9 mm absorbs
/// JSON's round trip of doubles (exact) plus float rounding.
const MARGIN_TOL: f64 = 1e-9;

#[test]
fn committed_truth_agrees_with_the_call_functions() {
    for f in committed() {
        let ls = f.scene().unwrap();
        assert_eq!(ls.scene.pieces.len(), f.truth.pieces.len(), "{}", f.dir.display());
        for (p, t) in ls.scene.pieces.iter().zip(&f.truth.pieces) {
            assert_eq!(p.id, t.id);
            let h = piece_thickness(&ls.board, p.kind).unwrap();
            let r = piece_radius(&ls.board, p.kind).unwrap();
            let fp = Footprint::new(p.centre(h).on_plane(), r);
            assert!(fp.centre.distance(t.footprint.centre) < MARGIN_TOL && (fp.radius_mm - t.footprint.radius_mm).abs() < MARGIN_TOL);
            let (same, margin) = match (&ls.board.layout, t.call) {
                (Layout::Shuffleboard(s), PieceCall::Shuffleboard(m)) => {
                    let want = calls::shuffle_call(&ls.board, s, fp, f.truth.foul_line.unwrap());
                    (want.call == m.call && want.boundary == m.boundary, (want.margin_mm, m.margin_mm))
                }
                (Layout::Washer(w), PieceCall::Washer(m)) => {
                    let want = calls::washer_call(&ls.board, w, WasherPose { centre: p.centre(h), tilt_deg: p.tilt_deg });
                    (want.call == m.call && want.boundary == m.boundary, (want.margin_mm, m.margin_mm))
                }
                (Layout::Sjoelbak(s), PieceCall::Sjoelen(m)) => {
                    let want = calls::sjoel_call(s, fp, p.tilt_deg);
                    (want.call == m.call && want.boundary == m.boundary, (want.margin_mm, m.margin_mm))
                }
                _ => panic!("{}: {} has a call of another game", f.dir.display(), t.id),
            };
            assert!(same, "{}: {} call differs: {:?}", f.dir.display(), t.id, t.call);
            assert!((margin.0 - margin.1).abs() < MARGIN_TOL, "{}: {} margin {margin:?}", f.dir.display(), t.id);
        }
    }
}

/// A piece's truth says how much of its top face the camera sees: a washer on the floor behind a board's near end
/// (varied 35: nothing of it in the image) is hidden, the lower of two washers in a cup half hidden by the upper,
/// and a washer alone on an open board seen whole. The committed truth holds the same as the scene gives.
#[test]
fn the_truth_says_how_much_of_a_piece_the_camera_sees() {
    let load = |dir: &str| Fixture::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap();
    let seen = |f: &Fixture, id: &str| {
        let fresh = boardcall::render::truth::truth_for(&f.scene().unwrap(), &f.truth.image);
        let t = *fresh.pieces.iter().find(|p| p.id.to_string() == id).expect("the piece");
        let committed = f.truth.pieces.iter().find(|p| p.id.to_string() == id).expect("the piece");
        assert!((t.visible_fraction - committed.visible_fraction).abs() < 1e-12, "{id}: {} vs committed {}", t.visible_fraction, committed.visible_fraction);
        t
    };
    let behind = seen(&load("fixtures/varied/35-yocu-9-plain-whole-brown"), "blue#1");
    assert!(behind.in_frame && behind.visible_fraction < 0.05 && !behind.must_be_found(), "{behind:?}");
    let under = seen(&load("fixtures/scenes/36-holeyboard-two_in_hole"), "red#1");
    assert!(under.visible_fraction > 0.1 && under.visible_fraction < 0.5, "{under:?}");
    let open = seen(&load("fixtures/scenes/36-holeyboard-two_in_hole"), "red#2");
    assert!((open.visible_fraction - 1.0).abs() < 1e-12 && open.must_be_found(), "{open:?}");
}

#[test]
fn a_committed_fixture_regenerates_byte_for_byte() {
    // The recipe regenerates the committed scenes exactly, and one image (the
    // cheapest, a washer board) re-renders to the committed bytes.
    let planned = plan_set(&GenerateConfig::default()).unwrap();
    let set = fixture::list(&fixtures_dir()).unwrap();
    assert_eq!(planned.len(), set.len());
    for (p, dir) in planned.iter().zip(&set) {
        assert_eq!(dir.file_name().unwrap().to_str().unwrap(), p.name);
        let committed = std::fs::read_to_string(dir.join(fixture::SCENE_FILE)).unwrap();
        assert_eq!(committed, p.scene.scene.to_json(), "{}", p.name);
    }
    let p = planned.iter().find(|p| p.scene.scene.board == "holeyboard").unwrap();
    let tmp = std::env::temp_dir().join(format!("boardcall-regen-{}", std::process::id()));
    let img = boardcall::render::render(&p.scene, 2);
    fixture::write(&tmp, &p.scene, &img, fixture::IMAGE_FILE).unwrap();
    for file in [fixture::IMAGE_FILE, fixture::TRUTH_FILE, fixture::CAMERA_FILE, fixture::SCENE_FILE] {
        let a = std::fs::read(tmp.join(file)).unwrap();
        let b = std::fs::read(fixtures_dir().join(&p.name).join(file)).unwrap();
        assert!(a == b, "{}/{file} does not regenerate byte for byte", p.name);
    }
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn fixtures_round_trip_through_the_folder_layout() {
    let r = PieceId::of_team(Team::Red, 1);
    let mut scene = clean_scene("yocu-9", vec![piece(r, PieceKind::Washer, 0.0, 737.0, Some(-76.0 + 1.6), 0.0, 0.0)], BoardPoint3::new(0.0, 700.0, 0.0), -0.1);
    // A fifth of the 800x600 camera: the same view (a principal point left at 404 px would be outside the image).
    let c = &mut scene.camera.intrinsics;
    (c.image_width, c.image_height, c.fx, c.fy, c.cx, c.cy) = (160, 120, c.fx / 5.0, c.fy / 5.0, c.cx / 5.0, c.cy / 5.0);
    scene.supersample = 1;
    let ls = scene.validate("t").unwrap();
    let root = std::env::temp_dir().join(format!("boardcall-fixture-{}", std::process::id()));
    let img = boardcall::render::render(&ls, 1);
    // The same bytes on any number of threads.
    assert_eq!(img, boardcall::render::render(&ls, 3));
    let truth = fixture::write(&root.join("a/one"), &ls, &img, "frame.png").unwrap();
    fixture::write(&root.join("b"), &ls, &img, "frame.jpg").unwrap();
    let found = fixture::list(&root).unwrap();
    assert_eq!(found, vec![root.join("a/one"), root.join("b")]);
    let f = Fixture::load(&found[0]).unwrap();
    assert_eq!(f.truth, truth);
    assert_eq!(f.image().unwrap(), img, "PNG is lossless");
    assert_eq!(f.camera, ls.scene.camera.intrinsics);
    match f.truth.pieces[0].call {
        PieceCall::Washer(m) => assert_eq!(m.call, calls::WasherCall::In { hole: 4 }),
        other => panic!("{other:?}"),
    }
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn a_bad_scene_is_a_clear_error_with_exit_code_3() {
    let dir = std::env::temp_dir().join(format!("boardcall-badscene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_boardcall");
    let run = |text: &str| {
        let path = dir.join("scene.json");
        std::fs::write(&path, text).unwrap();
        let out = std::process::Command::new(bin).args(["render"]).arg(&path).args(["-o"]).arg(dir.join("x.png")).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, err) = run("{ \"format\": 1, \"board\": ");
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("line 1"), "{err}");
    let mut good = clean_scene("sjoelbak", vec![], BoardPoint3::new(0.0, 100.0, 0.0), 0.0);
    good.pieces.push(piece(PieceId::of_team(Team::Red, 1), PieceKind::Weight, 0.0, 50.0, None, 0.0, 0.0));
    let (code, err) = run(&good.to_json());
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("pieces[0].kind"), "{err}");
    let (code, err) = run(&clean_scene("no-such-board", vec![], BoardPoint3::new(0.0, 0.0, 0.0), 0.0).to_json());
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("no-such-board"), "{err}");
    let plan = std::process::Command::new(bin).arg("plan").arg(dir.join("scene.json")).output().unwrap();
    assert_eq!(plan.status.code(), Some(3));
    std::fs::remove_dir_all(&dir).ok();
}
