//! Scenes of tables built otherwise than the board file says: a scene's construction
//! override reaches the renderer's solids (probed with the ray caster), an override equal
//! to the nominal construction changes nothing, the new appearance options are checked and
//! drawn, and the varied fixture recipe regenerates deterministically.

use boardcall::board::{ConstructionKeys, GateBar};
use boardcall::camera::{Camera, Distortion};
use boardcall::fixture;
use boardcall::geom::BoardPoint3;
use boardcall::render::generate::GenerateConfig;
use boardcall::render::raycast::{Surface, World};
use boardcall::render::scene::{Appearance, CameraSpec, Effects, FloorLook, Mark, PoseSpec, Print, Scene, SCENE_FORMAT};
use boardcall::render::shade::render_linear;
use boardcall::render::varied;
use std::path::Path;

const DOWN: [f64; 3] = [0.0, 0.0, -1.0];
/// Heights are sums of a few decimal literals: 1e-9 mm only absorbs float rounding.
const EXACT_MM: f64 = 1e-9;

/// A small overhead scene of `board`, looking straight down at `target` from 1.5 m.
fn overhead(board: &str, target: BoardPoint3) -> Scene {
    Scene {
        format: SCENE_FORMAT,
        board: board.into(),
        foul_line: Default::default(),
        construction: None,
        camera: CameraSpec {
            intrinsics: Camera { image_width: 160, image_height: 120, fx: 150.0, fy: 150.0, cx: 79.5, cy: 59.5, distortion: Distortion::default() },
            pose: PoseSpec::LookAt { position: BoardPoint3::new(target.x_mm, target.y_mm, 1500.0), target, up: [0.0, -1.0, 0.0] },
        },
        pieces: vec![],
        lights: vec![],
        appearance: Appearance { wood_grain: 0.0, ..Appearance::default() },
        effects: Effects::clean(),
        supersample: 1,
        seed: 3,
        tags: vec![],
    }
}

fn down_at(world: &World, x: f64, y: f64) -> (Surface, f64) {
    let h = world.intersect([x, y, 2000.0], DOWN, 1e9).expect("a ray straight down meets the board or the floor");
    (h.surface, h.point[2])
}

#[test]
fn an_overridden_gutter_is_rendered_where_the_construction_says() {
    let hw = 254.0;
    let mut s = overhead("shuffleboard-22ft", BoardPoint3::new(0.0, 300.0, 0.0));
    let nominal = s.clone().validate("nominal").unwrap();
    s.construction = Some(ConstructionKeys { gutter_width_mm: Some(95.0), gutter_depth_mm: Some(50.0), rail_height_mm: Some(40.0), ..Default::default() });
    let wide = s.validate("wide gutter").unwrap();
    let (a, b) = (World::build(&nominal.board, &[]), World::build(&wide.board, &[]));
    // 85 mm beyond the surface's edge: the nominal 76.2 mm gutter has ended (a rail, 20 mm up),
    // the 95 mm one has not (its floor, 50 mm down).
    let (sa, za) = down_at(&a, hw + 85.0, 300.0);
    let (sb, zb) = down_at(&b, hw + 85.0, 300.0);
    assert_eq!((sa, sb), (Surface::Rail, Surface::Gutter));
    assert!((za - 20.0).abs() < EXACT_MM && (zb + 50.0).abs() < EXACT_MM, "{za} {zb}");
    // The wide gutter's rail starts at 95 mm and stands 40 mm high; beyond the end too.
    let (s, z) = down_at(&b, hw + 96.0, 300.0);
    assert!(s == Surface::Rail && (z - 40.0).abs() < EXACT_MM, "{s:?} {z}");
    assert_eq!(down_at(&b, 0.0, -90.0).0, Surface::Gutter);
    assert_eq!(down_at(&a, 0.0, -90.0).0, Surface::Rail);
    // The surface itself is the rules': unchanged.
    let (s, z) = down_at(&b, hw - 1.0, 300.0);
    assert!(s == Surface::BoardTop && z.abs() < EXACT_MM);
}

#[test]
fn a_bridged_gate_bar_closes_the_openings_above_its_tunnels() {
    let mut s = overhead("sjoelbak", BoardPoint3::new(0.0, 110.0, 0.0));
    let blocks = World::build(&s.clone().validate("blocks").unwrap().board, &[]);
    s.construction = Some(ConstructionKeys { gate_bar: Some(GateBar::Bridged), gate_tunnel_height_mm: Some(30.0), ..Default::default() });
    let bridged = World::build(&s.validate("bridged").unwrap().board, &[]);
    // Straight down into the opening of the compartment at x = 50: open with blocks, the bar's top when bridged.
    assert_eq!(down_at(&blocks, 50.0, 110.0).0, Surface::BoardTop);
    let (surface, z) = down_at(&bridged, 50.0, 110.0);
    assert!(surface == Surface::GateBar && (z - 50.0).abs() < EXACT_MM, "{surface:?} {z}");
    // A disc's path along the board at 10 mm up still passes through the tunnel (to the back wall).
    let h = bridged.intersect([50.0, 400.0, 10.0], [0.0, -1.0, 0.0], 1e9).unwrap();
    assert_eq!(h.surface, Surface::Wall, "{h:?}");
    // At 40 mm up it meets the bar's front face.
    let h = bridged.intersect([50.0, 400.0, 40.0], [0.0, -1.0, 0.0], 1e9).unwrap();
    assert!(h.surface == Surface::GateBar && (h.point[1] - 120.0).abs() < EXACT_MM, "{h:?}");
}

#[test]
fn the_nominal_construction_as_an_override_changes_nothing() {
    let s = overhead("sjoelbak", BoardPoint3::new(0.0, 300.0, 0.0));
    let plain = s.clone().validate("plain").unwrap();
    let mut o = s;
    o.construction = Some(ConstructionKeys::of(&plain.board.construction()));
    let overridden = o.validate("nominal override").unwrap();
    assert_eq!(plain.board, overridden.board);
    let (a, b) = (boardcall::render::render(&plain, 1), boardcall::render::render(&overridden, 1));
    assert!(a.as_raw() == b.as_raw(), "the same construction renders the same bytes");
}

#[test]
fn bad_overrides_and_looks_are_named() {
    let base = overhead("holeyboard", BoardPoint3::new(0.0, 600.0, 0.0));
    let mut s = base.clone();
    s.construction = Some(ConstructionKeys { wall_height_mm: Some(50.0), ..Default::default() });
    let e = s.validate("t").unwrap_err().to_string();
    assert!(e.contains("construction.wall_height_mm"), "{e}");
    let mut s = base.clone();
    s.construction = Some(ConstructionKeys { stand_height_mm: Some(20.0), ..Default::default() });
    assert!(s.validate("t").unwrap_err().to_string().contains("construction.stand_height_mm"));
    let floor = FloorLook { colour: [0.4; 3], variation: 0.1, tile_mm: 5.0, grout_mm: 1.0, grout_colour: [0.1; 3], angle_deg: 0.0 };
    let mut s = base.clone();
    s.appearance.floor = Some(floor);
    assert!(s.validate("t").unwrap_err().to_string().contains("appearance.floor.tile_mm"));
    let mut s = base.clone();
    s.appearance.prints = vec![Print { mark: Mark::Number("3a".into()), x_mm: 0.0, y_mm: 400.0, size_mm: 60.0, angle_deg: 0.0, colour: [0.5; 3] }];
    assert!(s.validate("t").unwrap_err().to_string().contains("appearance.prints[0].mark.number"));
    let mut s = base.clone();
    s.appearance.rail_colour = Some([1.5, 0.0, 0.0]);
    assert!(s.validate("t").unwrap_err().to_string().contains("appearance.rail_colour"));
    // An unknown construction key in the JSON is a syntax error naming it.
    let text = base.to_json().replace("\"camera\":", "\"construction\": {\"gutter_wide_mm\": 80.0},\n  \"camera\":");
    let e = Scene::from_json(&text, "t").unwrap_err().to_string();
    assert!(e.contains("gutter_wide_mm"), "{e}");
}

#[test]
fn a_print_is_painted_on_the_surface() {
    // Straight down at a white roundel's centre (its bar) on dark wood: the centre pixel is the paint's.
    let target = BoardPoint3::new(0.0, 650.0, 0.0);
    let mut s = overhead("holeyboard", target);
    s.appearance.wood_colour = [0.1, 0.06, 0.03];
    s.appearance.paint_wear = 0.0;
    // No lacquer glare: the light above the camera would put its highlight on the centre.
    s.appearance.specular = 0.0;
    let bare = render_linear(&s.clone().validate("bare").unwrap(), 1);
    s.appearance.prints = vec![Print { mark: Mark::Roundel, x_mm: 0.0, y_mm: 650.0, size_mm: 150.0, angle_deg: 0.0, colour: [0.8, 0.8, 0.8] }];
    let printed = render_linear(&s.validate("printed").unwrap(), 1);
    let centre = |img: &boardcall::render::shade::LinearImage| img.pixels[60 * 160 + 80][1] as f64;
    assert!(centre(&printed) > 4.0 * centre(&bare), "{} vs {}", centre(&printed), centre(&bare));
}

#[test]
fn the_varied_recipe_regenerates_deterministically() {
    let cfg = varied::default_config();
    let a = varied::plan_set(&cfg).unwrap();
    let b = varied::plan_set(&cfg).unwrap();
    assert!((36..=48).contains(&a.len()), "{}", a.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.name, y.name);
        assert_eq!(x.scene.scene, y.scene.scene, "{}", x.name);
    }
    // Every board, both views, both lenses; every scene overrides the construction.
    for board in ["shuffleboard-22ft", "sjoelbak", "holeyboard", "yocu-4", "yocu-9"] {
        assert!(a.iter().filter(|p| p.scene.scene.board == board).count() >= 6, "{board}");
    }
    for tag in ["view_end", "view_whole", "lens_fisheye", "lens_brown", "hard"] {
        assert!(a.iter().any(|p| p.scene.scene.tags.iter().any(|t| t == tag)), "{tag}");
    }
    assert!(a.iter().all(|p| p.scene.scene.construction.is_some()));
    // Another seed draws other tables.
    let other = varied::plan_set(&GenerateConfig { seed: cfg.seed + 1, ..cfg }).unwrap();
    assert!(a.iter().zip(&other).any(|(x, y)| x.scene.scene.construction != y.scene.scene.construction));
    // The committed set is this recipe's output.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(varied::VARIED_DIR);
    let set = fixture::list(&root).unwrap();
    assert_eq!(set.len(), a.len());
    for (p, dir) in a.iter().zip(&set) {
        assert_eq!(dir.file_name().unwrap().to_str().unwrap(), p.name);
        let committed = std::fs::read_to_string(dir.join(fixture::SCENE_FILE)).unwrap();
        assert_eq!(committed, p.scene.scene.to_json(), "{}", p.name);
    }
    // One scene rendered twice, small: the same bytes.
    let small = GenerateConfig { width: 200, height: 150, supersample: 1, ..cfg };
    let planned = varied::plan_set(&small).unwrap();
    let p = planned.iter().find(|p| p.name.contains("sjoelbak") && p.name.contains("fisheye")).unwrap();
    let (x, y) = (boardcall::render::render(&p.scene, 1), boardcall::render::render(&p.scene, 2));
    assert!(x.as_raw() == y.as_raw(), "{} renders differently twice", p.name);
}
