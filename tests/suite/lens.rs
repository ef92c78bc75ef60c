//! Every stage through both lens models: a board rendered through a strong fisheye and through a pinhole camera
//! at the same pose gives the same top view (rectify) and, undistorted, the same pinhole image, up to resampling.

use boardcall::camera::{Camera, Distortion};
use boardcall::frame::Frame;
use boardcall::geom::BoardPoint3;
use boardcall::rectify::{RectifyConfig, Rectifier};
use boardcall::render::scene::{Appearance, CameraSpec, Effects, Light, PoseSpec, Scene, SCENE_FORMAT};
use boardcall::render::LoadedScene;
use boardcall::undistort::{UndistortConfig, Undistorter};
use opencv::core::Mat;
use opencv::prelude::*;

/// A ~180 degree fisheye (Kannala-Brandt coefficients of an equidistant lens), 1280x960.
fn fisheye() -> Camera {
    Camera {
        image_width: 1280,
        image_height: 960,
        fx: 538.5,
        fy: 539.0,
        cx: 642.5,
        cy: 477.5,
        distortion: Distortion::fisheye(-0.013, -0.0084, 0.0039, -0.0008),
    }
}

/// The yocu-4 board seen from 1.5 m, slightly tilted, through `camera`: untextured wood, one point light, no
/// noise, so that the two lenses' images differ only by their sampling.
fn scene(camera: Camera) -> LoadedScene {
    let target = BoardPoint3::new(0.0, 700.0, 0.0);
    Scene {
        format: SCENE_FORMAT,
        board: "yocu-4".into(),
        foul_line: Default::default(),
        construction: None,
        camera: CameraSpec {
            intrinsics: camera,
            pose: PoseSpec::LookAt { position: BoardPoint3::new(150.0, 900.0, 1500.0), target, up: [0.0, -1.0, 0.0] },
        },
        pieces: vec![],
        lights: vec![Light { position: BoardPoint3::new(300.0, 500.0, 1800.0), intensity: 2.0, radius_mm: 0.0, kelvin: 5000.0 }],
        appearance: Appearance { specular: 0.05, wood_grain: 0.0, paint_wear: 0.0, ..Appearance::default() },
        effects: Effects::clean(),
        supersample: 2,
        seed: 1,
        tags: vec![],
    }
    .validate("lens test")
    .unwrap()
}

/// Renders the scene to a raw frame (through a PNG, as the pipeline reads frames).
fn frame(ls: &LoadedScene, name: &str) -> Frame {
    let img = boardcall::render::render(ls, 2);
    let path = std::env::temp_dir().join(format!("boardcall-lens-{}-{name}.png", std::process::id()));
    img.save(&path).unwrap();
    let f = Frame::load(&path).unwrap();
    std::fs::remove_file(&path).ok();
    f
}

/// Mean absolute difference (grey levels, all channels) over the pixels that are not black in either image,
/// and how many pixels that is.
fn difference(a: &Mat, b: &Mat) -> (f64, usize) {
    let (a, b) = (a.data_bytes().unwrap(), b.data_bytes().unwrap());
    let (mut sum, mut n) = (0.0, 0);
    for (p, q) in a.chunks(3).zip(b.chunks(3)) {
        if p.iter().all(|v| *v == 0) || q.iter().all(|v| *v == 0) {
            continue;
        }
        sum += p.iter().zip(q).map(|(x, y)| (*x as f64 - *y as f64).abs()).sum::<f64>() / 3.0;
        n += 1;
    }
    (sum / n.max(1) as f64, n)
}

#[test]
fn a_fisheye_frame_rectifies_and_undistorts_like_a_pinhole_one() {
    let fish = fisheye();
    let pinhole = Camera { distortion: Distortion::NONE, ..fish };
    let (ls_f, ls_p) = (scene(fish), scene(pinhole));
    let (frame_f, frame_p) = (frame(&ls_f, "fisheye"), frame(&ls_p, "pinhole"));
    let cfg = RectifyConfig { mm_per_px: 2.0, margin_mm: 20.0, height_mm: 0.0, crop_to_view: false };
    let top = |cam: Camera, f: &Frame| Rectifier::new(cam, ls_f.pose, &ls_f.board, cfg).unwrap().run(f).unwrap().image;
    let (top_f, top_p) = (top(fish, &frame_f), top(pinhole, &frame_p));
    let (d, n) = difference(&top_f, &top_p);
    // Reading the fisheye frame as if it were a pinhole one misplaces everything off the centre.
    let (wrong, _) = difference(&top(pinhole, &frame_f), &top_p);
    eprintln!("top view: fisheye vs pinhole {d:.2} grey levels over {n} px; read with the wrong lens {wrong:.2}");
    assert!(n > 100_000, "{n} pixels compared");
    // Measured 0.31 against 6.6 grey levels: resampling differences only, where the wrong lens is 20 times that.
    assert!(d < 1.0 && wrong > 5.0 * d, "{d} vs {wrong}");

    let mut und = Undistorter::new(fish, UndistortConfig::default()).unwrap();
    let u = und.run(&frame_f).unwrap();
    // The undistorted frame is what a pinhole camera with the undistorter's matrix sees.
    let ideal = scene(u.camera);
    let (d, n) = difference(&u.image, &frame(&ideal, "ideal").image());
    eprintln!("undistorted fisheye vs pinhole render at fx {:.1}: {d:.2} grey levels over {n} px", u.camera.fx);
    // Measured 0.10 grey levels over every pixel: the bilinear resampling's blur only.
    assert!(n > 500_000 && d < 1.0, "{d} over {n} px");
}
