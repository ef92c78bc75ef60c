//! Automatic board localisation on the renderer's fixtures (pose accuracy and refusals), and the manual `--points` fallback.

use crate::common::{self, scene_at};
use boardcall::board::Board;
use boardcall::camera::{Camera, CameraPose};
use boardcall::fixture::{self, Fixture};
use boardcall::frame::Frame;
use boardcall::geom::{BoardPoint3, PixelPoint};
use boardcall::locate::{self, BoardModel, LocateConfig, LocateError, Locator};
use boardcall::undistort::{UndistortConfig, Undistorter};
use std::path::{Path, PathBuf};

/// The bar for the reported uncertainty: the error of a located pose's
/// worst key point is within this many of its `position_sigma_mm` ...
const SIGMA_COVERAGE: f64 = 3.0;
/// ... on at least this share of the located fixtures (a Gaussian error is
/// within 3 sigma 99 % of the time along one axis; the share leaves room for
/// the few poses whose error is the model's, not noise).
const MIN_SIGMA_COVERED: f64 = 0.95;

/// The bar: board points reproject within 1.0 px of truth and map back within 1.0 mm.
const MAX_REPROJECTION_PX: f64 = 1.0;
const MAX_BACK_PROJECTION_MM: f64 = 1.0;

fn scenes_dir() -> PathBuf {
    // BOARDCALL_SCENES points at another rendered set (e.g. a fresh `boardcall fixtures generate`).
    std::env::var_os("BOARDCALL_SCENES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenes"))
}

fn fixtures() -> Vec<Fixture> {
    let dir = scenes_dir();
    assert!(dir.is_dir(), "no rendered fixtures at {} (boardcall fixtures generate -o {0})", dir.display());
    let list = fixture::list(&dir).unwrap();
    assert!(!list.is_empty(), "no fixtures under {}", dir.display());
    list.iter().map(|d| Fixture::load(d).unwrap()).collect()
}

/// The key points (surface corners, line ends, hole centres) the truth camera sees inside the frame.
fn visible_key_points(model: &BoardModel, cam: &Camera, truth: &CameraPose) -> Vec<(String, BoardPoint3, PixelPoint)> {
    model
        .key_points
        .iter()
        .filter_map(|(name, p)| {
            let px = truth.project(cam, *p)?;
            let inside = px.u >= 0.0 && px.v >= 0.0 && px.u <= cam.image_width as f64 - 1.0 && px.v <= cam.image_height as f64 - 1.0;
            inside.then(|| (name.clone(), *p, px))
        })
        .collect()
}

struct Errors {
    px: f64,
    mm: f64,
    worst: String,
}

fn errors(model: &BoardModel, cam: &Camera, truth: &CameraPose, got: &CameraPose) -> Errors {
    let mut e = Errors { px: 0.0, mm: 0.0, worst: String::new() };
    for (name, p, px) in visible_key_points(model, cam, truth) {
        // A pose that cannot see or back-project a point the truth sees is infinitely off.
        let dpx = got.project(cam, p).map_or(f64::INFINITY, |q| q.distance(px));
        let dmm = got.back_project(cam, px, p.z_mm).map_or(f64::INFINITY, |b| b.distance(p.on_plane()));
        if dpx > e.px || dmm > e.mm {
            e.worst = name;
        }
        e.px = e.px.max(dpx);
        e.mm = e.mm.max(dmm);
    }
    e
}

/// No accepted pose may be further off than this, anywhere (px, mm): beyond it a
/// pose would move calls, so the locator must refuse instead. (The bar
/// of 1 px / 1 mm is met on every fixture not listed as a known shortfall.)
const MAX_ACCEPTED_PX: f64 = 2.0;
const MAX_ACCEPTED_MM: f64 = 2.0;

/// How the locator did on one fixture, as recorded in `fixtures/golden/locate.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    /// Within the bar.
    Met,
    /// Located, but outside the bar by this much (worst key point).
    Outside { px: f64, mm: f64 },
    Refused,
}

/// Tests every fixture against the bar. Fixtures that miss it are the
/// known shortfalls listed in `fixtures/golden/locate.json` (regenerate with
/// `REGENERATE=1 cargo test --release --test suite locate::`): any other fixture
/// missing the bar, a shortfall getting worse, or any accepted pose beyond
/// `MAX_ACCEPTED_*` fails.
#[test]
fn every_fixture_is_located_to_a_pixel_and_a_millimetre() {
    let mut outcomes = std::collections::BTreeMap::new();
    let mut wrong = Vec::new();
    let (mut max_px, mut max_mm) = (0.0f64, 0.0f64);
    // Located fixtures, and those whose error the reported sigma covers.
    let (mut located, mut covered) = (0usize, 0usize);
    // BOARDCALL_LOCATE_ONLY=substring runs the fixtures whose name contains it (a diagnostic run: no golden comparison).
    let only = std::env::var("BOARDCALL_LOCATE_ONLY").ok();
    let all: Vec<Fixture> = fixtures().into_iter().filter(|f| only.as_ref().map_or(true, |o| f.dir.to_string_lossy().contains(o.as_str()))).collect();
    for f in &all {
        let board = Board::load(&f.truth.board).unwrap();
        let frame = Frame::load(&f.image_path()).unwrap();
        let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
        let u = und.run(&frame).unwrap();
        let mut loc = Locator::new(&board, LocateConfig::default());
        let name = f.dir.file_name().unwrap().to_string_lossy().into_owned();
        let outcome = match loc.run(&u) {
            Ok(found) => {
                let e = errors(loc.model(), &f.camera, &f.truth.camera.pose(), &found.pose);
                eprintln!(
                    "{name:40} {:.3} px {:.3} mm (worst {}) rms {:.3} px coverage {:.2} sigma {:.3} mm",
                    e.px, e.mm, e.worst, found.reprojection_rms_px, found.coverage, found.position_sigma_mm
                );
                max_px = max_px.max(e.px);
                max_mm = max_mm.max(e.mm);
                located += 1;
                covered += usize::from(e.mm <= SIGMA_COVERAGE * found.position_sigma_mm);
                if e.px > MAX_ACCEPTED_PX || e.mm > MAX_ACCEPTED_MM {
                    wrong.push(format!("{name}: accepted a pose {:.3} px, {:.3} mm off at {}", e.px, e.mm, e.worst));
                }
                if e.px > MAX_REPROJECTION_PX || e.mm > MAX_BACK_PROJECTION_MM {
                    // Recorded to 0.01, rounded up, so the golden file is stable.
                    Outcome::Outside { px: (e.px * 100.0).ceil() / 100.0, mm: (e.mm * 100.0).ceil() / 100.0 }
                } else {
                    Outcome::Met
                }
            }
            Err(err) => {
                match loc.last_candidate() {
                    Some(c) => {
                        let e = errors(loc.model(), &f.camera, &f.truth.camera.pose(), &c);
                        eprintln!("{name:40} REFUSED: {err} (candidate {:.3} px {:.3} mm off)", e.px, e.mm);
                    }
                    None => eprintln!("{name:40} REFUSED: {err}"),
                }
                Outcome::Refused
            }
        };
        outcomes.insert(name, outcome);
    }
    let met = outcomes.values().filter(|o| **o == Outcome::Met).count();
    eprintln!("{} fixtures: {met} within the bar; max {max_px:.3} px, {max_mm:.3} mm", all.len());
    assert!(wrong.is_empty(), "{wrong:#?}");
    eprintln!("error within {SIGMA_COVERAGE} sigma: {covered} of {located} located");
    if only.is_none() {
        assert!(covered as f64 >= MIN_SIGMA_COVERED * located as f64, "the reported sigma covers the error of only {covered} of {located} located fixtures");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/golden/locate.json");
    let shortfalls: std::collections::BTreeMap<&String, &Outcome> = outcomes.iter().filter(|(_, o)| **o != Outcome::Met).collect();
    if std::env::var_os("REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&shortfalls).unwrap() + "\n").unwrap();
        return;
    }
    if only.is_some() {
        return;
    }
    if std::env::var_os("BOARDCALL_SCENES").is_some() {
        // Another set: report the bar only.
        assert_eq!(met, all.len(), "{shortfalls:#?}");
        return;
    }
    let known: std::collections::BTreeMap<String, Outcome> =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("golden file (REGENERATE=1)")).unwrap();
    let mut problems = Vec::new();
    for (name, now) in &shortfalls {
        match (known.get(*name), now) {
            (None, _) => problems.push(format!("{name}: misses the bar ({now:?}) and is no known shortfall")),
            (Some(Outcome::Outside { px, mm }), Outcome::Outside { px: p, mm: m }) if *p > px + 0.05 || *m > mm + 0.05 => {
                problems.push(format!("{name}: got worse, {px}/{mm} -> {p}/{m}"))
            }
            (Some(Outcome::Outside { .. }), Outcome::Refused) => problems.push(format!("{name}: now refused")),
            _ => {}
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// One fixture per board, for the slower per-image checks below.
fn one_per_board() -> Vec<Fixture> {
    let mut seen = std::collections::BTreeSet::new();
    fixtures().into_iter().filter(|f| seen.insert(f.truth.board.clone())).collect()
}

/// The projected playing surface (plus `grow_mm` all round) painted over in one flat colour.
fn paint_over_board(f: &Fixture, grow_mm: f64, colour: f64) -> Frame {
    use opencv::core::{Point, Scalar, Vector};
    use opencv::imgproc;
    let board = Board::load(&f.truth.board).unwrap();
    let truth = f.truth.camera.pose();
    let (hw, len) = (board.surface.half_width() + grow_mm, board.surface.length_mm + grow_mm);
    // The outline, densely sampled so the lens's curvature is followed; clipped to points in front of the camera.
    let mut outline: Vector<Point> = Vector::new();
    let n = 200;
    let corners = [(-hw, -grow_mm), (hw, -grow_mm), (hw, len), (-hw, len), (-hw, -grow_mm)];
    for w in corners.windows(2) {
        for i in 0..n {
            let t = i as f64 / n as f64;
            let p = BoardPoint3::new(w[0].0 + t * (w[1].0 - w[0].0), w[0].1 + t * (w[1].1 - w[0].1), 0.0);
            if let Some(px) = truth.project(&f.camera, p) {
                outline.push(Point::new(px.u.clamp(-1e5, 1e5) as i32, px.v.clamp(-1e5, 1e5) as i32));
            }
        }
    }
    let frame = Frame::load(&f.image_path()).unwrap();
    let mut img = frame.image().clone();
    let polys: Vector<Vector<Point>> = Vector::from_iter([outline]);
    imgproc::fill_poly_def(&mut img, &polys, Scalar::all(colour)).unwrap();
    Frame::from_mat(img).unwrap()
}

fn locate(f: &Fixture, frame: &Frame) -> Result<locate::BoardPose, LocateError> {
    let board = Board::load(&f.truth.board).unwrap();
    let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
    Locator::new(&board, LocateConfig::default()).run(&und.run(frame).unwrap())
}

/// Locates the varied fixture `name` from scratch (panicking if refused), with its errors against the true pose.
fn locate_varied(name: &str) -> (locate::BoardPose, Errors) {
    let (f, frame, board) = scene_at(&Path::new("fixtures/varied").join(name));
    let found = locate(&f, &frame).unwrap_or_else(|e| panic!("{name}: {e}"));
    let e = errors(&BoardModel::new(&board), &f.camera, &f.truth.camera.pose(), &found.pose);
    (found, e)
}

/// Varied scenes the search once refused or misread, each located within the bar now:
/// - 00, 02: end views of a wood surface between grey gutters. The surface's long sides come out of Canny a pixel
///   either way along the grain, and `HoughLinesP` breaks them into pieces shorter than a line: no hypothesis had the
///   right sides (the nearest 118 px off). The same edges traced chain by chain (`FastLineDetector`) give them whole.
/// - 13: a whole sjoelbak through a fisheye, rectified: its sides' and gate bar's lines traced whole likewise.
/// - 03: brown gutters beside a brown surface, red rails. The best reading takes the gutters' outer edges for the
///   surface's sides (the camera too near, the lines matched) and fails the surface-inside check; the re-fits that
///   move the camera away about where the lines confirm it find the surface.
/// - 05: a whole 22 ft table at 5 mm a pixel, its painted lines 1.2 px wide: read at their middle (the two edges'
///   gradients overlap). Without the ends' surface check a mirrored reading (the far end's stretch read from the
///   other side, the rest of the board taken to lie out of view) passed, 7085 px off.
/// - 18: a sjoelbak's end view whose -x side, a wall's foot, is confirmed on under half its length and bends the
///   pose 2.3 px off; without it the rest of the board confirms on 88 % of its samples instead of 79 %, and that
///   re-fit is the pose (`Locator::unbent`).
#[test]
fn varied_views_once_refused_or_misread_are_located_within_the_bar() {
    for name in [
        "00-shuffleboard-22ft-plain-end-brown",
        "02-shuffleboard-22ft-plain-end-brown",
        "03-shuffleboard-22ft-plain-end-brown",
        "05-shuffleboard-22ft-line_edge-whole-brown",
        "13-sjoelbak-plain-whole-fisheye",
        "18-sjoelbak-on_partition-end-brown",
    ] {
        let (found, e) = locate_varied(name);
        // Whole views are a few mm a pixel: the pixel bar, and the millimetre error within the reported sigma's cover.
        assert!(e.px <= MAX_REPROJECTION_PX, "{name}: {:.3} px off at {}", e.px, e.worst);
        assert!(e.mm <= SIGMA_COVERAGE * found.position_sigma_mm, "{name}: {:.3} mm off, sigma {:.3} mm", e.mm, found.position_sigma_mm);
    }
}

/// Varied 01: a whole 22 ft table through a fisheye, about 5 mm a pixel. Its trey and deuce lines are a pixel wide
/// and a few levels dark (2-3 of their 30 samples each found them one by one), and its target end shows no edge even
/// at the true pose (the gutter beyond it is of the surface's own wood): it was refused, 37 % of its lines' samples
/// confirming, then for that end. Read on average along their length, the lines pull and confirm, and with the far
/// end confirmed the unseen end is no reason to refuse: located, its scoring end (the target end to the deuce line)
/// within the pixel bar and the reported sigma's cover, and nowhere past the bound on any accepted pose. (Its far
/// end, at the fisheye's edge where a pixel is some 10 mm, is 12 mm off, outside the sigma of 3.2 mm: that end is
/// found on the step to the rail, a pixel past a sliver of gutter.)
#[test]
fn a_whole_table_whose_end_shows_no_edge_is_read_from_its_faint_lines_and_other_end() {
    let name = "01-shuffleboard-22ft-plain-whole-fisheye";
    let (f, frame, board) = scene_at(&Path::new("fixtures/varied").join(name));
    let found = locate(&f, &frame).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (model, truth) = (BoardModel::new(&board), f.truth.camera.pose());
    let e = errors(&model, &f.camera, &truth, &found.pose);
    assert!(e.px <= MAX_ACCEPTED_PX, "{:.3} px off at {}", e.px, e.worst);
    let deuce = model.key_points.iter().find(|(n, _)| n == "deuce line +x end").map(|(_, p)| p.y_mm).expect("a deuce line");
    let scoring_end: Vec<_> = visible_key_points(&model, &f.camera, &truth).into_iter().filter(|(_, p, _)| p.y_mm <= deuce).collect();
    assert_eq!(scoring_end.len(), 6, "the target end's corners and the trey and deuce lines' ends are in view");
    for (point, p, px) in scoring_end {
        let dpx = found.pose.project(&f.camera, p).map_or(f64::INFINITY, |q| q.distance(px));
        let dmm = found.pose.back_project(&f.camera, px, p.z_mm).map_or(f64::INFINITY, |b| b.distance(p.on_plane()));
        assert!(dpx <= MAX_REPROJECTION_PX, "{point}: {dpx:.3} px off");
        assert!(dmm <= SIGMA_COVERAGE * found.position_sigma_mm, "{point}: {dmm:.3} mm off, sigma {:.3} mm", found.position_sigma_mm);
    }
}

/// A pose `locate -o` wrote is confirmed on the very frame it was found in, as a fixed camera's later frames give it
/// back (`score --pose`, `watch`): the pose file keeps the construction fitted with it, and the check starts there.
/// Varied 11 (a sjoelbak walled 70 mm high where the board file says 50, seen whole): checked from the nominal build,
/// the refit of its own pose slid 50 mm to a reading whose gate bar does not confirm, and the frame was refused as
/// "the camera moved"; varied 18's pose came back 5 mm from where it was located.
#[test]
fn a_located_pose_given_back_from_its_file_is_confirmed_on_its_own_frame() {
    let dir = common::scratch("locate", "given_back");
    for name in ["11-sjoelbak-plain-whole-brown", "18-sjoelbak-on_partition-end-brown"] {
        let (f, frame, board) = scene_at(&Path::new("fixtures/varied").join(name));
        let found = locate(&f, &frame).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(found.construction.contains_key("wall_height_mm"), "{name}: the fitted construction is reported: {:?}", found.construction);
        let path = dir.join(format!("{name}.yaml"));
        found.save(&path).unwrap();
        let file = boardcall::camera::PoseFile::load(&path).unwrap();
        for (key, mm) in &found.construction {
            // The file holds every dimension to its last digit but one (YAML's 17 significant digits).
            assert!((file.construction[key] - mm).abs() <= 1e-9 * mm.abs().max(1.0), "{name}: {key} {mm} read back as {}", file.construction[key]);
        }
        let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
        let given = Locator::new(&board, LocateConfig::default()).refine_from(&und.run(&frame).unwrap(), &file.into()).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The same reading: every key point in view within a tenth of a pixel of where the located pose put it (the
        // refit may settle a hair away; a different reading is pixels off).
        let moved = errors(&BoardModel::new(&board), &f.camera, &found.pose, &given.pose);
        assert!(moved.px <= 0.1, "{name}: the given-back pose moved {:.3} px at {}", moved.px, moved.worst);
    }
    // The same pose given with no construction (typed points, `setup`, a hand-made file): refitted from the nominal
    // build it slides and fails, and the heights started across their range find it again.
    let (f, frame, board) = scene_at(Path::new("fixtures/varied/11-sjoelbak-plain-whole-brown"));
    let found = locate(&f, &frame).unwrap();
    let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
    let given = Locator::new(&board, LocateConfig::default()).refine_from(&und.run(&frame).unwrap(), &locate::GivenPose::new(found.pose)).unwrap();
    let moved = errors(&BoardModel::new(&board), &f.camera, &found.pose, &given.pose);
    assert!(moved.px <= 0.1, "given with no construction, the pose moved {:.3} px at {}", moved.px, moved.worst);
}

/// A pose file's construction naming a dimension the board does not have (a shuffleboard's pose given for a
/// sjoelbak) is an input error naming it, not a refusal of the frame.
#[test]
fn a_pose_whose_construction_is_another_boards_is_an_input_error() {
    let (f, frame, board) = scene_at(Path::new("fixtures/scenes/16-sjoelbak-plain"));
    let mut given = locate::GivenPose::new(f.truth.camera.pose());
    given.construction.insert("gutter_width_mm".into(), 76.2);
    let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
    let e = Locator::new(&board, LocateConfig::default()).refine_from(&und.run(&frame).unwrap(), &given).unwrap_err();
    assert!(matches!(&e, LocateError::UnknownConstruction { key, .. } if key == "gutter_width_mm"), "{e}");
    assert!(!e.is_refusal(), "{e}");
    assert!(e.to_string().contains("wall_height_mm"), "the board's own dimensions are named: {e}");
}

/// Varied 09: a whole 22 ft table whose side is read on a slab-face ramp (its gradient spread over pixels, 0.65 px
/// RMS along 352 samples): the fit's residual was 0.46 px and the frame refused. A rough feature's pull now enters
/// the sigma (its leave-one-out re-fit) and the residual no longer refuses: located, within the reported sigma's
/// cover and the bound on any accepted pose.
#[test]
fn a_side_read_on_a_ramp_is_located_within_its_sigma() {
    let name = "09-shuffleboard-22ft-gutter-whole-brown";
    let (found, e) = locate_varied(name);
    assert!(e.px <= MAX_ACCEPTED_PX, "{name}: {:.3} px off at {}", e.px, e.worst);
    assert!(e.mm <= SIGMA_COVERAGE * found.position_sigma_mm, "{name}: {:.3} mm off, sigma {:.3} mm", e.mm, found.position_sigma_mm);
}

/// Varied 27: a whole yocu-4 board whose long sides (some 500 edge samples each) and ends outweighed its four hole
/// rims (92 each) sample by sample, the sides' and ends' own errors with them: its worst key point 1.29 px off.
/// Each rules-fixed edge now weighs as one measurement ([`LocateConfig::weigh_edges_alike`]): 0.55 px, within the
/// pixel bar.
#[test]
fn each_edge_weighs_as_one_measurement_and_the_holes_hold_the_board() {
    let name = "27-yocu-4-plain-whole-brown";
    let (f, frame, board) = scene_at(&Path::new("fixtures/varied").join(name));
    let und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap().run(&frame).unwrap();
    let located = |alike: bool| {
        let cfg = LocateConfig { weigh_edges_alike: alike, ..LocateConfig::default() };
        let found = Locator::new(&board, cfg).run(&und).unwrap_or_else(|e| panic!("{name} (edges alike: {alike}): {e}"));
        let e = errors(&BoardModel::new(&board), &f.camera, &f.truth.camera.pose(), &found.pose);
        (found, e)
    };
    let (found, alike) = located(true);
    let (_, by_sample) = located(false);
    eprintln!("{name}: edges alike {:.3} px at {}, samples alike {:.3} px at {}", alike.px, alike.worst, by_sample.px, by_sample.worst);
    assert!(alike.px <= MAX_REPROJECTION_PX, "{name}: {:.3} px off at {}", alike.px, alike.worst);
    assert!(alike.mm <= SIGMA_COVERAGE * found.position_sigma_mm, "{name}: {:.3} mm off, sigma {:.3} mm", alike.mm, found.position_sigma_mm);
    assert!(alike.px < by_sample.px, "{name}: edges alike {:.3} px, samples alike {:.3} px", alike.px, by_sample.px);
}

#[test]
fn a_covered_board_is_refused() {
    for f in one_per_board() {
        // A cloth over the board and a margin around it, in a mid grey.
        let frame = paint_over_board(&f, 150.0, 110.0);
        match locate(&f, &frame) {
            Err(e) => assert!(e.is_refusal(), "{}: {e}", f.dir.display()),
            Ok(p) => panic!("{}: a covered board was located: {p:?}", f.dir.display()),
        }
    }
}

#[test]
fn an_empty_scene_is_refused() {
    use opencv::core::{Mat, Scalar, CV_8UC3};
    for f in one_per_board() {
        // No board at all: a flat floor with sensor noise.
        use opencv::prelude::RNGTrait;
        let (h, w) = (f.camera.image_height as i32, f.camera.image_width as i32);
        let floor = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(90.0)).unwrap();
        let mut noise = Mat::new_rows_cols_with_default(h, w, CV_8UC3, Scalar::all(0.0)).unwrap();
        let mut rng = opencv::core::RNG::new(7).unwrap();
        rng.fill(&mut noise, opencv::core::RNG_NORMAL, &Scalar::all(0.0), &Scalar::all(3.0), false).unwrap();
        let mut img = Mat::default();
        opencv::core::add_def(&floor, &noise, &mut img).unwrap();
        match locate(&f, &Frame::from_mat(img).unwrap()) {
            Err(e) => assert!(e.is_refusal(), "{}: {e}", f.dir.display()),
            Ok(p) => panic!("{}: an empty scene was located: {p:?}", f.dir.display()),
        }
    }
}

#[test]
fn hand_picked_points_give_the_pose_and_a_mistyped_one_is_refused() {
    for f in one_per_board() {
        let board = Board::load(&f.truth.board).unwrap();
        let model = BoardModel::new(&board);
        let truth = f.truth.camera.pose();
        let mut pts: Vec<locate::Correspondence> = visible_key_points(&model, &f.camera, &truth)
            .into_iter()
            .enumerate()
            // A user's clicks: off by up to ~0.3 px.
            .map(|(i, (_, p, px))| locate::Correspondence { board: p, pixel: PixelPoint::new(px.u + 0.3 * ((i % 3) as f64 - 1.0), px.v + 0.2 * ((i % 2) as f64 * 2.0 - 1.0)) })
            .collect();
        assert!(pts.len() >= 4, "{}: only {} key points in view", f.dir.display(), pts.len());
        let got = locate::locate_from_points(&board, &f.camera, &pts, &LocateConfig::default()).unwrap();
        let e = errors(&model, &f.camera, &truth, &got.pose);
        // 0.3 px clicks over the frame: well inside the automatic bar's 1 px / 1 mm... at 2 mm/px a click is 0.6 mm.
        assert!(e.px < 1.0 && e.mm < 2.0, "{}: {:.3} px {:.3} mm", f.dir.display(), e.px, e.mm);
        // The pose says how good it is (the points' noise, at least a pixel each, through the pose): three
        // sigmas cover its real error.
        let sigma = got.position_sigma_mm;
        assert!(sigma.is_finite() && e.mm <= 3.0 * sigma, "{}: error {:.3} mm, sigma {sigma:.3} mm", f.dir.display(), e.mm);
        // One point typed 40 px off: the fit is poor, no pose; the message names the points that fit worst.
        pts[0].pixel.u += 40.0;
        let err = locate::locate_from_points(&board, &f.camera, &pts, &LocateConfig::default()).unwrap_err();
        assert!(err.is_refusal(), "{err}");
        assert!(err.to_string().contains("off by"), "{err}");
        let few = &pts[..3];
        assert!(matches!(locate::locate_from_points(&board, &f.camera, few, &LocateConfig::default()), Err(LocateError::TooFewPoints { .. })));
    }
}

/// `eval-locate` reads a scene in the external renders' layout (`camera_pose` as
/// `R_board_to_cam`, `t_mm`) as the same scene in ours, and its measures are right:
/// zero against itself, the shift's size for a shifted pose, a located pose within
/// the 1.5 px.
#[test]
fn eval_locate_reads_both_layouts_and_measures_the_pose() {
    use boardcall::eval::locate::{pose_errors, run_scene, LocateScene, MAX_CORNER_ERROR_PX};
    let f = &one_per_board()[0];
    let ours = LocateScene::load(&f.dir).unwrap();
    let dir = common::scratch("locate", "eval-locate");
    for file in [&f.truth.image, &f.truth.camera.intrinsics_file] {
        std::fs::copy(f.dir.join(file), dir.join(if file == &f.truth.image { "image.jpg" } else { "camera.yaml" })).unwrap();
    }
    let truth = serde_json::json!({
        "board": f.truth.board,
        "camera_pose": { "R_board_to_cam": ours.pose.rotation, "t_mm": ours.pose.translation },
    });
    std::fs::write(dir.join("truth.json"), truth.to_string()).unwrap();
    let theirs = LocateScene::load(&dir).unwrap();
    let (corner, position) = pose_errors(&theirs.board, &theirs.camera, &ours.pose, &theirs.pose);
    // Both read the same numbers: only rounding separates them.
    assert!(corner.unwrap() < 1e-6 && position.unwrap() < 1e-6, "{corner:?} {position:?}");
    // Moving the camera 2 mm sideways moves the board in the image and on the board.
    let mut shifted = ours.pose;
    shifted.translation[0] += 2.0;
    let (corner, position) = pose_errors(&ours.board, &ours.camera, &ours.pose, &shifted);
    assert!(corner.unwrap() > 0.5 && (position.unwrap() - 2.0).abs() < 0.5, "{corner:?} {position:?}");
    let outcome = run_scene(&theirs, &LocateConfig::default(), Some(&dir.join("overlay.png")));
    assert!(outcome.passes(), "{outcome:?}");
    assert!(outcome.corner_error_px.unwrap() <= MAX_CORNER_ERROR_PX);
    assert!(Frame::load(&dir.join("overlay.png")).is_ok(), "the overlay is a readable picture");
    // The located pose given back on its own frame (a fixed camera's next frames) is confirmed where it was found.
    assert_eq!(outcome.given_back.as_deref(), Some("confirmed"), "{outcome:?}");
    assert!(outcome.given_back_moved_px.is_some_and(|m| m <= 0.1), "{outcome:?}");
}

/// A far end with hardly any contrast and a grain line beside it: the floor beyond the end painted a few levels
/// off the surface's own colour, dark dashes over 35 % of the end's length `GRAIN_MM` beyond it.
fn faint_end_with_grain(f: &Fixture, board: &Board) -> Frame {
    use opencv::core::{Point, Scalar, Vector};
    use opencv::imgproc;
    const GRAIN_MM: f64 = 8.0;
    let truth = f.truth.camera.pose();
    let (hw, len) = (board.surface.half_width(), board.surface.length_mm);
    let px = |x: f64, y: f64| truth.project(&f.camera, BoardPoint3::new(x, y, 0.0)).map(|p| Point::new(p.u.round() as i32, p.v.round() as i32)).unwrap();
    let frame = Frame::load(&f.image_path()).unwrap();
    let mut img = frame.image().clone();
    // The surface's colour just inside the end.
    let inside = px(0.0, len - 40.0);
    let c = *opencv::prelude::MatTraitConst::at_2d::<opencv::core::Vec3b>(&img, inside.y, inside.x).unwrap();
    let faint = Scalar::new(c[0] as f64 + 6.0, c[1] as f64 + 6.0, c[2] as f64 + 6.0, 0.0);
    let beyond: Vector<Point> = Vector::from_iter([px(-hw - 60.0, len), px(hw + 60.0, len), px(hw + 60.0, len + 150.0), px(-hw - 60.0, len + 150.0)]);
    imgproc::fill_poly_def(&mut img, &Vector::<Vector<Point>>::from_iter([beyond]), faint).unwrap();
    let dark = Scalar::new(c[0] as f64 * 0.6, c[1] as f64 * 0.6, c[2] as f64 * 0.6, 0.0);
    let dashes = 10;
    for k in 0..dashes {
        let x0 = -hw + 2.0 * hw * k as f64 / dashes as f64;
        let x1 = x0 + 0.35 * 2.0 * hw / dashes as f64;
        imgproc::line(&mut img, px(x0, len + GRAIN_MM), px(x1, len + GRAIN_MM), dark, 2, imgproc::LINE_AA, 0).unwrap();
    }
    Frame::from_mat(img).unwrap()
}

/// A far end the image hardly shows, with a grain line a few px beyond it (external y4_00: a pale board's end
/// against a floor whose wood grain runs parallel to it): the fit may read the end on the grain and bend the pose
/// towards it. The reported sigma must cover the error that makes. (External y4_00: 6.7 mm off with a sigma of
/// 1.4 mm from the edge samples alone, 4.9 mm with the re-fits that leave out each weakly confirmed feature. On
/// these renders the samples' own covariance covers the bend already; the re-fits widen it where the end is
/// confirmed under half its length.)
#[test]
fn a_faint_far_end_with_grain_beside_it_is_located_within_the_reported_sigma() {
    let names = ["40-yocu-4-plain", "41-yocu-4-plain", "28-holeyboard-plain", "29-holeyboard-plain", "52-yocu-9-plain"];
    let mut located = 0;
    for name in names {
        let f = Fixture::load(&scenes_dir().join(name)).unwrap();
        let board = Board::load(&f.truth.board).unwrap();
        let frame = faint_end_with_grain(&f, &board);
        let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
        // A refusal is honest here (the end may look like the surface going on); a located pose must be within its sigma.
        let Ok(found) = Locator::new(&board, LocateConfig::default()).run(&und.run(&frame).unwrap()) else { continue };
        located += 1;
        let e = errors(&BoardModel::new(&board), &f.camera, &f.truth.camera.pose(), &found.pose);
        assert!(e.mm <= SIGMA_COVERAGE * found.position_sigma_mm, "{name}: {:.3} mm off, sigma {:.3} mm", e.mm, found.position_sigma_mm);
    }
    assert!(located >= names.len() - 1, "only {located} of {} located", names.len());
}

/// Varied 16, a sjoelbak's scoring end through a fisheye: its back wall's and gate bar's feet lie in their own
/// shadow, and none of the edges the rules fix across the board confirms (the sides and the partitions' feet, which
/// run along it, do). Its place along the board rests on the walls' and bar's tops, and its sigma counts how far a
/// maker's build may lie from the construction model (`CONSTRUCTION_EDGE_BIAS_MM`, 3 mm): 3.96 mm, where the edges'
/// scatter alone gave 0.84 mm (real sjoelbak photos read this way were 8-27 px off). A sjoelbak whose gate bar's
/// feet show (own scene 19) keeps the sigma its edges give.
#[test]
fn a_sjoelbak_whose_feet_do_not_show_takes_its_sigma_from_the_construction() {
    // The construction's 3 mm through the pose leaves the worst board point at least this uncertain, mm.
    const CONSTRUCTION_LIMITED_SIGMA_MM: f64 = 2.0;
    let pinned_along = |found: &locate::BoardPose, board: &str| {
        let model = BoardModel::new(&Board::load(board).unwrap());
        found.features.iter().any(|f| {
            let across = model.edges.iter().any(|e| e.name == f.feature && e.fixed && e.runs_across());
            across && f.inliers >= 5 && f.inliers as f64 >= 0.3 * f.samples as f64
        })
    };
    let name = "16-sjoelbak-gate_half-end-fisheye";
    let (found, e) = locate_varied(name);
    assert!(!pinned_along(&found, "sjoelbak"), "{name}: an edge across the board confirms: {:?}", found.features);
    assert!(found.position_sigma_mm >= CONSTRUCTION_LIMITED_SIGMA_MM, "{name}: sigma {:.3} mm", found.position_sigma_mm);
    assert!(e.mm <= SIGMA_COVERAGE * found.position_sigma_mm, "{name}: {:.3} mm off, sigma {:.3} mm", e.mm, found.position_sigma_mm);
    let own = fixtures().into_iter().find(|f| f.dir.ends_with("19-sjoelbak-plain")).expect("own scene 19");
    let got = locate(&own, &Frame::load(&own.image_path()).unwrap()).unwrap();
    assert!(pinned_along(&got, "sjoelbak"), "own 19: no edge across the board confirms: {:?}", got.features);
    assert!(got.position_sigma_mm < 1.0, "own 19: sigma {:.3} mm", got.position_sigma_mm);
}

/// Varied 01, a whole 22 ft table through a fisheye, read (by a line search this project tried) from its short foul
/// line as its far end and its long foul line as the short one: the board 10.8 m away, the rest of it beyond the image.
/// Its far end, foul line, sides and rail tops all confirm; what lies beyond that "far end" is the same wood, a few
/// pixels from the interior sample after the stripe. Given back, it must be refused, naming the far end.
#[test]
fn a_whole_table_read_from_its_foul_line_as_its_far_end_is_refused() {
    let (f, frame, board) = scene_at(Path::new("fixtures/varied/01-shuffleboard-22ft-plain-whole-fisheye"));
    let wrong = CameraPose::from_rvec_tvec([2.1208149507094505, -2.3102238361661644, -0.0016490832487587935], [7597.309814424642, -650.9124354712883, 1940.4360591150205]);
    let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
    let e = Locator::new(&board, LocateConfig::default()).refine_from(&und.run(&frame).unwrap(), &locate::GivenPose::new(wrong)).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("far end"), "{e}");
}

/// A fresh varied table (`fixtures generate --varied --seed 7002`, scene 12; kept in
/// `fixtures/regressions/`): a sjoelbak's scoring end, its gate bar bridged. The search read the bar as the
/// back wall, the compartments back to front with the field behind them (the camera 855 mm off, its sigma 1 mm):
/// every disc scored in the wrong compartment, with no review. The board's sides end at its back wall; in that
/// reading the field's walls run on past it, along both sides' lines. Given back, that pose is refused naming
/// them; from scratch the frame is refused, or located within the bar, never read so again.
#[test]
fn a_gate_bar_read_as_the_back_wall_is_refused_for_the_sides_running_on_past_it() {
    let (f, frame, board) = scene_at(Path::new("fixtures/regressions/sjoelbak-gate-bar-read-as-back-wall"));
    let wrong = CameraPose::from_rvec_tvec([1.2799203090868869, 2.6857244310625905, 0.14549771837688241], [0.31716016675885889, 0.16717265716012569, 783.60004481640362]);
    let mut und = Undistorter::new(f.camera, UndistortConfig::default()).unwrap();
    let e = Locator::new(&board, LocateConfig::default()).refine_from(&und.run(&frame).unwrap(), &locate::GivenPose::new(wrong)).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("sides run on past its back wall"), "{e}");
    if let Ok(found) = locate(&f, &frame) {
        let e = errors(&BoardModel::new(&board), &f.camera, &f.truth.camera.pose(), &found.pose);
        assert!(e.px <= MAX_ACCEPTED_PX && e.mm <= MAX_ACCEPTED_MM, "located {:.1} px, {:.1} mm off (worst: {})", e.px, e.mm, e.worst);
    }
}
