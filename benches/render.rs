//! Renderer speed: a 1920x1080 scene with 4x supersampling (2 x 2 samples per
//! pixel) on one core, for each board family. Target (issue 4): under 5 s.

use boardcall::render::generate::{plan_set, GenerateConfig};
use boardcall::render::LoadedScene;
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

/// A fixture-set scene of `board` with soft light (two area lights: the slower
/// kind), re-framed for a 1920x1080 sensor.
fn full_hd(board: &str) -> LoadedScene {
    let set = plan_set(&GenerateConfig::default()).expect("the fixture recipe is valid");
    let mut ls = set
        .into_iter()
        .find(|p| p.scene.scene.board == board && p.scene.scene.tags.iter().any(|t| t == "soft_light"))
        .expect("the recipe has a soft-light scene of every board")
        .scene;
    let cam = &mut ls.scene.camera.intrinsics;
    let k = 1920.0 / cam.image_width as f64;
    cam.fx *= k;
    cam.fy *= k;
    cam.cx = (cam.cx + 0.5) * k - 0.5;
    cam.cy = (cam.cy + 0.5) * k - 0.5 - (cam.image_height as f64 * k - 1080.0) / 2.0;
    cam.image_width = 1920;
    cam.image_height = 1080;
    ls.scene.supersample = 2;
    ls
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("render_1920x1080_4spp_one_core");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    for board in ["yocu-9", "shuffleboard-22ft", "sjoelbak"] {
        let ls = full_hd(board);
        g.bench_function(board, |b| b.iter(|| boardcall::render::render(std::hint::black_box(&ls), 1)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
