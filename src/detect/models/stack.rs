//! Washers on a cup's floor: two of two teams lying one on the other (which is
//! upper told by the colour where their rings overlap), and a washer placed by
//! its team's colour on the floor where the rim (or a washer over it) hides too
//! much of its outline to fit.

use crate::board::WasherBoard;
use crate::detect::sight::{PieceSolid, Occluders};
use crate::detect::verify::Ctx;
use crate::detect::colour::ColourClass;
use crate::detect::teams::{PALE_PAINT_MIN_SATURATION, PALE_PAINT_MIN_VALUE};
use crate::detect::{Detection, Detections, Unexplained};
use crate::geom::{BoardPoint, BoardPoint3, Footprint};
use crate::measure::{CircleFit, FitConfig};
use crate::piece::Team;

/// outside points at this many angles, set this far (mm) in from the ring's
/// edges (clear of the edges' blur at the floor's ~2 mm pixels).
const CUP_TEMPLATE_ANGLES: usize = 36;
/// The template's lattice (mm), for the floor's samples and the centres tried.
const CUP_TEMPLATE_CELL_MM: f64 = 0.5;
const CUP_TEMPLATE_INSET_MM: f64 = 2.5;
/// At least this fraction of the ring's points must show the team's colour:
/// a washer a rim hides but for a sliver is not placed by colour.
const CUP_TEMPLATE_MIN_HITS: f64 = 0.15;
/// Of the ring's points in view, at least this fraction must show the team's
/// colour: a washer flat on the floor matches 88-100 % in the fixtures, while
/// a leaner's colour seen through the opening matches 40 % at its best.
const CUP_TEMPLATE_MIN_MATCH: f64 = 0.8;
/// Standard uncertainty (mm) of a washer placed by the template: a ring
/// point's spacing round a partly hidden outline (the fixtures' template
/// placements are within 0.3-2.6 mm).
const CUP_TEMPLATE_SIGMA_MM: f64 = 2.0;

/// Two washers overlapping on a cup's floor: which lies on the other is told by
/// the colour where their rings overlap, sampled on this lattice (mm)...
const STACK_LATTICE_MM: f64 = 1.0;
/// ... from at least this many points in view on both rings (a lens narrower
/// than a few mm, or hidden by the rim, tells nothing) ...
const STACK_MIN_POINTS: usize = 12;
/// ... of which this share must have the one team's colour (the rest is edge
/// blur, shadow and the other team's colour seen at a ring's margin).
const STACK_MAJORITY: f64 = 0.75;
/// The lower of two stacked washers shows a short arc of its outline: its
/// refit probes this many times as densely, so that the arc holds the
/// dozen edge points a fit needs ([`crate::measure::MIN_EDGE_POINTS`]); the
/// centre's uncertainty follows from the arc's span, however dense.
const STACK_LOWER_PROBE_FACTOR: usize = 2;

/// A washer placed under one of its own team lies at least this fraction of
/// a ring's width (outer less inner radius) from it: the offset at which the
/// template's middle row of ring points comes into view past the upper
/// washer's outline. Less shows only the outer row, which the upper washer's
/// own side, seen obliquely, could fill.
const MIN_STACK_OFFSET: f64 = 0.5;

/// A team's paint on a cup's floor clear of the washers found there
/// ([`PAINT_LEFT`]), of at least this fraction of a washer's area, is a
/// washer under them: the floor is not painted, and light and blur leave at
/// most 0.11 of a washer beside a single one on the committed fixtures.
const MIN_CUP_PAINT_FRACTION: f64 = 0.2;
/// How a cup's floor is looked at for a team's paint past the washers found.
struct PaintLook {
    /// Paint within this distance (mm) of a found washer's outline is that washer's.
    margin_mm: f64,
    /// The lattice's cell (mm).
    cell_mm: f64,
    /// Whether each point's line of sight is checked (which only removes paint).
    sight: bool,
}
/// The coarse first look: right up to the outlines, a 1 mm lattice, no lines of
/// sight; less than [`STACK_GATE_FRACTION`] of a washer there is not worth the
/// fine looks that cast rays.
const PAINT_GATE: PaintLook = PaintLook { margin_mm: 0.0, cell_mm: 1.0, sight: false };
/// The lower washers placed on the fixtures show 0.1 of a washer and more past
/// the upper one's outline, a single washer's own side some 0.06.
const STACK_GATE_FRACTION: f64 = 0.05;
/// The paint left once no washer could be placed: 2 mm clear of the outlines
/// (a washer's side seen obliquely, 3.2 mm tall, and its outline's blur), on
/// the template's lattice, in view.
const PAINT_LEFT: PaintLook = PaintLook { margin_mm: 2.0, cell_mm: CUP_TEMPLATE_CELL_MM, sight: true };

/// Washers of two teams overlapping on one cup's floor lie one on the
/// other: the colour where their rings overlap says which is on top. The
/// upper one rests between flat on the lower (one washer's thickness up)
/// and tilted from the floor onto it: it is measured again half a
/// thickness up, and the parallax of the other half enters its
/// uncertainty. The lower one is measured again with the upper one as
/// an occluder, so that the upper's edges (its outline, its own hole
/// with the lower's colour inside) are not taken for the lower's; where
/// too little of its outline shows, it is placed by its colour on the
/// floor ([`cup_template`]). Washers of one team cannot be told
/// apart this way and are left as measured.
pub(super) fn settle_cups(cx: &Ctx, w: &WasherBoard, out: &mut Detections) {
    let (r, t) = (cx.geo.shape.radius_mm, w.washer_thickness_mm);
    let floor_top = -w.cup_depth_mm + t;
    let on_floor = |d: &Detection| (d.top_z_mm - floor_top).abs() < 1e-6 && d.tilt_deg.abs() <= 1.0 && d.team.is_some();
    // over[i]: the washers lying on washer i.
    let mut over: Vec<Vec<usize>> = vec![Vec::new(); out.pieces.len()];
    for h in &w.holes {
        let cup: Vec<usize> =
            (0..out.pieces.len()).filter(|&i| on_floor(&out.pieces[i]) && out.pieces[i].footprint.centre.distance(h.centre()) < h.radius()).collect();
        for (n, &a) in cup.iter().enumerate() {
            for &b in &cup[n + 1..] {
                let (da, db) = (&out.pieces[a], &out.pieces[b]);
                if da.team == db.team || da.footprint.centre.distance(db.footprint.centre) >= 2.0 * r {
                    continue;
                }
                match upper_of(cx, da, db, w) {
                    Some(true) => over[b].push(a),
                    Some(false) => over[a].push(b),
                    None => {}
                }
            }
        }
    }
    washers_under_found(cx, w, out, &mut over);
    if over.iter().all(Vec::is_empty) {
        return;
    }
    // The upper ones first, half a thickness up.
    let lifted: Vec<usize> = (0..out.pieces.len()).filter(|&i| over.iter().any(|o| o.contains(&i))).collect();
    let z_up = floor_top + t / 2.0;
    // Its rest height is anywhere in [floor_top, floor_top + t].
    let height_sigma = super::uniform_sigma_mm(t);
    for &i in &lifted {
        let d = &out.pieces[i];
        let class = cx.class_of(d.team);
        let start = cx.along_sight(d.footprint.centre.at_height(d.top_z_mm), z_up).unwrap_or(d.footprint.centre);
        let parallax = height_sigma * cx.sideways_per_height(start.at_height(z_up));
        let fit = cx.fit_with(Footprint::new(start, r), z_up, true, &cx.fit_cfg, class).ok();
        let d = &mut out.pieces[i];
        d.top_z_mm = z_up;
        match fit {
            Some(f) => d.take(&f, f.centre_sigma_mm.hypot(parallax)),
            // The same image position, half a thickness higher.
            None => {
                d.footprint = Footprint::new(start, r);
                d.sigma_mm = d.sigma_mm.hypot(parallax);
            }
        }
    }
    // Then the lower ones, with the upper ones as occluders.
    for i in (0..out.pieces.len()).filter(|&i| !over[i].is_empty()) {
        let hiding = Occluders::new(over[i].iter().map(|&j| cx.occluder(&out.pieces[j])).collect());
        let lc = cx.hidden_by(&hiding);
        let d = &out.pieces[i];
        let class = cx.class_of(d.team);
        let hole = w.hole_enclosing(d.footprint.centre);
        let dense = FitConfig { probes: STACK_LOWER_PROBE_FACTOR * cx.fit_cfg.probes, ..cx.fit_cfg };
        let placed = lc
            .fit_with(Footprint::new(d.footprint.centre, r), floor_top, true, &dense, class)
            .ok()
            .or_else(|| hole.and_then(|h| cup_template(&lc, w, h, class)));
        if let Some(f) = placed {
            out.pieces[i].take(&f, f.centre_sigma_mm);
        }
    }
}

/// A washer lying under those found on a cup's floor, of any team (one of the
/// upper one's team cannot be told from it by colour; the upper one's outline
/// is the one fitted). With every washer found in the cup hiding what lies
/// under it, each team's colour still in view on the floor is placed as a
/// washer's ring ([`cup_template`]); one whose centre lies at least
/// [`MIN_STACK_OFFSET`] of a ring's width from every washer of its team in the
/// cup is a washer of its own. It goes under the ones it overlaps (`over`),
/// which are then measured as lying on it. Where none can be placed, the
/// team's paint left in view on the floor is a washer too little shows of:
/// review ([`paint_left_in_cup`]).
fn washers_under_found(cx: &Ctx, w: &WasherBoard, out: &mut Detections, over: &mut Vec<Vec<usize>>) {
    let (r, t) = (cx.geo.shape.radius_mm, w.washer_thickness_mm);
    let floor_top = -w.cup_depth_mm + t;
    let ring_width = r - w.washer_inner_diameter_mm / 2.0;
    // On the floor or on a washer there, lying flat.
    let in_cup = |d: &Detection, h: &crate::board::Hole| {
        d.team.is_some() && d.tilt_deg.abs() <= 1.0 && d.top_z_mm <= floor_top + t + 1e-6 && d.footprint.centre.distance(h.centre()) < h.radius()
    };
    let teams: Vec<Team> = cx.teams.iter().map(|t| t.team).collect();
    for (hole, h) in w.holes.iter().enumerate() {
        let cup: Vec<usize> = (0..out.pieces.len()).filter(|&i| in_cup(&out.pieces[i], h)).collect();
        if cup.is_empty() {
            continue;
        }
        let found: Vec<BoardPoint> = cup.iter().map(|&j| out.pieces[j].footprint.centre).collect();
        for &team in &teams {
            let class = cx.class_of(Some(team));
            // Most cups show none of a team's paint past the washers found.
            if cup_paint(cx, w, hole, &found, class, &PAINT_GATE).0 < STACK_GATE_FRACTION {
                continue;
            }
            // The washers found hide the floor as they would lying on one more washer (the template
            // samples the top of a washer on the floor, where their own tops were measured).
            let lifted = |d: &Detection| PieceSolid::on(&cx.geo.board, d.kind, d.footprint, d.top_z_mm.max(floor_top) + t);
            let hiding = Occluders::new(cup.iter().map(|&j| lifted(&out.pieces[j])).collect());
            let lc = cx.hidden_by(&hiding);
            let own: Vec<usize> = cup.iter().copied().filter(|&j| out.pieces[j].team == Some(team)).collect();
            let apart = |f: &CircleFit| own.iter().all(|&j| out.pieces[j].footprint.centre.distance(f.footprint.centre) >= MIN_STACK_OFFSET * ring_width);
            let place = |colour: ColourClass| cup_template_in(&lc, w, hole, class, colour).filter(apart).and_then(|f| cx.finish(f, floor_top, Some(team), class).ok());
            // A washer under another lies deeper in the cup's light than the one on it: where its paint shows only
            // paler than the team's colour allows (external hb_00: saturation 0.25-0.32 in the light, the team's
            // floor 0.35), it is placed by that paler paint of the team's hue, in doubt, as a pale washer in an
            // empty cup is ([`pale_washers_in_empty_cups`]).
            let Some(colour) = cx.colour(class) else { continue };
            let placed = place(colour).or_else(|| {
                place(pale_paint(colour)).map(|d| Detection {
                    doubt: Some(format!(
                        "placed under the washer(s) found on hole {hole}'s floor by paint of team {team:?}'s hue paler than its colour \
                         allows (saturation under {:.2}): a washer under them?",
                        colour.min_saturation
                    )),
                    ..d
                })
            });
            let Some(lower) = placed else {
                out.unexplained.extend(paint_left_in_cup(&lc, w, hole, &found, team, class));
                continue;
            };
            let c = lower.footprint.centre;
            // Under the washers found over it, of any team: their outlines were fitted, its was not.
            let upper: Vec<usize> = cup.iter().copied().filter(|&j| out.pieces[j].footprint.centre.distance(c) < 2.0 * r).collect();
            out.pieces.push(lower);
            over.push(upper);
        }
    }
}

/// The team's paint (pale paint in the light included: [`PALE_PAINT_MIN_SATURATION`])
/// in view on hole `hole`'s floor with the washers found hiding theirs (`cx`'s
/// occluders), where no washer could be placed: of at least
/// [`MIN_CUP_PAINT_FRACTION`] of a washer, it is a washer under them that too
/// little shows of to place, and the frame needs review.
fn paint_left_in_cup(cx: &Ctx, w: &WasherBoard, hole: usize, found: &[BoardPoint], team: Team, class: usize) -> Option<Unexplained> {
    let (r, h) = (cx.geo.shape.radius_mm, w.holes[hole]);
    let (pieces, centre) = cup_paint(cx, w, hole, found, class, &PAINT_LEFT);
    (pieces >= MIN_CUP_PAINT_FRACTION).then(|| Unexplained {
        kind: cx.geo.shape.kind,
        team: Some(team),
        centre: centre.unwrap_or(h.centre()),
        area_mm2: pieces * std::f64::consts::PI * r * r,
        reason: format!(
            "{pieces:.2} washers' worth of team {team:?}'s colour on hole {hole}'s floor beside the washer(s) found there, \
             too little of an outline to place: another washer under them?"
        ),
    })
}

/// Cups in which no washer was found but whose floor shows a team's paint, pale paint in the light included, of at
/// least [`MIN_CUP_PAINT_FRACTION`] of a washer: a washer whose paint is paler than its team's colour allows (lit by
/// a bright lamp, varied 24: saturation 0.29-0.41 on a 0.35 floor) shows in the team's mask only in fragments, which
/// no proposal keeps, and was missed without a word. It is placed by the template in the paler paint of its team's
/// hue ([`cup_template_in`]) and flagged as pale; where no ring fits, the paint is reported (a washer not placed).
pub(super) fn pale_washers_in_empty_cups(cx: &Ctx, w: &WasherBoard, out: &mut Detections) {
    let (r, t) = (cx.geo.shape.radius_mm, w.washer_thickness_mm);
    let floor_top = -w.cup_depth_mm + t;
    for (hole, h) in w.holes.iter().enumerate() {
        // A washer found over the opening (on the rim, leaning, in the cup) explains the paint seen through it.
        if out.pieces.iter().any(|d| d.footprint.centre.distance(h.centre()) < h.radius() + r) {
            continue;
        }
        for (class, team) in cx.teams.iter().enumerate() {
            let (colour, pale) = (team.colour, pale_paint(team.colour));
            // Most cups are empty: the frame's colour grid over the opening (no line of sight to trace) tells first.
            if opening_paint(cx, h, &[colour, pale]) < OPENING_PAINT_SHARE * MIN_CUP_PAINT_FRACTION {
                continue;
            }
            let (pieces, centre) = cup_paint(cx, w, hole, &[], class, &PAINT_LEFT);
            if pieces < MIN_CUP_PAINT_FRACTION {
                continue;
            }
            let placed = cup_template_in(cx, w, hole, class, pale).and_then(|fit| cx.finish(fit, floor_top, Some(team.team), class).ok());
            match placed {
                Some(mut d) => {
                    d.doubt = Some(format!(
                        "placed on hole {hole}'s floor by paint of team {:?}'s hue paler than its colour allows (saturation under {:.2}): a pale washer?",
                        team.team, colour.min_saturation
                    ));
                    out.pieces.push(d);
                }
                None => out.unexplained.push(Unexplained {
                    kind: cx.geo.shape.kind,
                    team: Some(team.team),
                    centre: centre.unwrap_or(h.centre()),
                    area_mm2: pieces * std::f64::consts::PI * r * r,
                    reason: format!("{pieces:.2} washers' worth of team {:?}'s hue (pale paint included) on hole {hole}'s floor, where no washer was found or fits: a washer?", team.team),
                }),
            }
            break;
        }
    }
}

/// The cheap look first: of [`MIN_CUP_PAINT_FRACTION`] of a washer's paint on a cup's floor, at least this share
/// shows in the colour grid's cells over the opening (the grid lies at the surface; the floor seen through the
/// opening maps inside it, a few per cent smaller).
const OPENING_PAINT_SHARE: f64 = 0.5;

/// Washers' worth of paint of any of `colours` in the frame's colour grid (its cells at the surface's height) over
/// hole `h`'s opening.
fn opening_paint(cx: &Ctx, h: &crate::board::Hole, colours: &[ColourClass]) -> f64 {
    let (g, [hue, sat, val]) = (&cx.geo.grid, cx.hsv);
    let r = cx.geo.shape.radius_mm;
    let count = g
        .cells_within(h.centre(), h.radius())
        .map(|(col, row)| (row * g.cols + col) as usize)
        .filter(|&i| colours.iter().any(|c| c.contains([hue[i], sat[i], val[i]])))
        .count();
    count as f64 * g.step * g.step / (std::f64::consts::PI * r * r)
}

/// A team's colour `colour` widened to pale paint in the light: saturation down to
/// [`PALE_PAINT_MIN_SATURATION`], value from [`PALE_PAINT_MIN_VALUE`] (as unsaturated and darker is shadow).
fn pale_paint(colour: ColourClass) -> ColourClass {
    ColourClass { min_saturation: colour.min_saturation.min(PALE_PAINT_MIN_SATURATION), min_value: PALE_PAINT_MIN_VALUE, ..colour }
}

/// Washers' worth of team colour class `class` (pale paint in the light
/// included) on hole `hole`'s floor past the outlines of the washers found at
/// `found`, looked at as `look` says, and the paint's centre.
fn cup_paint(cx: &Ctx, w: &WasherBoard, hole: usize, found: &[BoardPoint], class: usize, look: &PaintLook) -> (f64, Option<BoardPoint>) {
    let (margin, cell) = (look.margin_mm, look.cell_mm);
    let Some(colour) = cx.colour(class) else { return (0.0, None) };
    let pale = pale_paint(colour);
    let (h, r) = (w.holes[hole], cx.geo.shape.radius_mm);
    let z = -w.cup_depth_mm + w.washer_thickness_mm;
    let n = (h.radius() / cell).ceil() as i32;
    let (mut count, mut sx, mut sy) = (0usize, 0.0, 0.0);
    for dy in -n..=n {
        for dx in -n..=n {
            let p = BoardPoint::new(h.x_mm + dx as f64 * cell, h.y_mm + dy as f64 * cell);
            let beside_found = found.iter().any(|c| p.distance(*c) < r + margin);
            if p.distance(h.centre()) > h.radius() || beside_found || (look.sight && !cx.sees(p.at_height(z))) {
                continue;
            }
            let Some(hsv) = cx.hsv_at(p.at_height(z)) else { continue };
            if colour.contains(hsv) || pale.contains(hsv) {
                (count, sx, sy) = (count + 1, sx + p.x_mm, sy + p.y_mm);
            }
        }
    }
    let pieces = count as f64 * cell * cell / (std::f64::consts::PI * r * r);
    (pieces, (count > 0).then(|| BoardPoint::new(sx / count as f64, sy / count as f64)))
}

/// Of two washers overlapping on a cup's floor, whether `a` lies on `b`
/// (`Some(false)`: `b` on `a`), by the team colour seen where their rings
/// overlap (clear of both washers' holes, through which the lower shows,
/// and of their edges' blur); `None` where too little of it is in view or
/// neither colour clearly holds it.
fn upper_of(cx: &Ctx, a: &Detection, b: &Detection, w: &WasherBoard) -> Option<bool> {
    let (r, r_in) = (cx.geo.shape.radius_mm, w.washer_inner_diameter_mm / 2.0);
    let z = -w.cup_depth_mm + w.washer_thickness_mm;
    let (ca, cb) = (a.footprint.centre, b.footprint.centre);
    let on_ring = |p: BoardPoint, c: BoardPoint| (r_in + CUP_TEMPLATE_INSET_MM..r - CUP_TEMPLATE_INSET_MM).contains(&p.distance(c));
    let (colour_a, colour_b) = (cx.colour(cx.class_of(a.team))?, cx.colour(cx.class_of(b.team))?);
    let n = (r / STACK_LATTICE_MM).ceil() as i32;
    let mid = BoardPoint::new((ca.x_mm + cb.x_mm) / 2.0, (ca.y_mm + cb.y_mm) / 2.0);
    let (mut na, mut nb, mut seen) = (0usize, 0usize, 0usize);
    for dy in -n..=n {
        for dx in -n..=n {
            let p = BoardPoint::new(mid.x_mm + dx as f64 * STACK_LATTICE_MM, mid.y_mm + dy as f64 * STACK_LATTICE_MM);
            if !on_ring(p, ca) || !on_ring(p, cb) || !cx.sees(p.at_height(z)) {
                continue;
            }
            let Some(hsv) = cx.hsv_at(p.at_height(z)) else { continue };
            seen += 1;
            na += colour_a.contains(hsv) as usize;
            nb += colour_b.contains(hsv) as usize;
        }
    }
    if seen < STACK_MIN_POINTS {
        return None;
    }
    let share = |k: usize| k as f64 >= STACK_MAJORITY * seen as f64;
    if share(na) {
        Some(true)
    } else if share(nb) {
        Some(false)
    } else {
        None
    }
}

/// Whether hole `hole`'s floor, where a washer lying flat on it would be seen, shows no paint of team `class`
/// over an area a washer would cover: at least [`EMPTY_CUP_MIN_SEEN`] of a washer's area of the floor in view, and
/// team-coloured cells under [`EMPTY_CUP_MAX_PAINT`] of it. What the hole model claims there is then
/// contradicted by the image (a washer flat in the cup would show); `false` where too little of the floor shows
/// to tell (a deep cup seen at a slant).
pub(super) fn cup_floor_shows_none(cx: &Ctx, w: &WasherBoard, hole: usize, class: usize) -> bool {
    let Some(colour) = cx.colour(class) else { return false };
    let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
    let h = w.holes[hole];
    let cell = EMPTY_CUP_CELL_MM;
    let half = (h.radius() / cell).ceil() as i32;
    let (mut seen, mut painted) = (0usize, 0usize);
    for dy in -half..=half {
        for dx in -half..=half {
            if (dx as f64).hypot(dy as f64) * cell > h.radius() {
                continue;
            }
            let p = BoardPoint3::new(h.x_mm + dx as f64 * cell, h.y_mm + dy as f64 * cell, bottom_top);
            if !cx.sees(p) {
                continue;
            }
            // Where the cup's shadow is too dark to tell a colour, the floor shows nothing either way.
            let Some(hsv) = cx.hsv_at(p).filter(|hsv| hsv[2] >= colour.min_value) else { continue };
            seen += 1;
            painted += usize::from(colour.contains(hsv));
        }
    }
    let washer_cells = std::f64::consts::PI * cx.geo.shape.radius_mm.powi(2) / (cell * cell);
    seen as f64 >= EMPTY_CUP_MIN_SEEN * washer_cells && (painted as f64) < EMPTY_CUP_MAX_PAINT * washer_cells
}

/// The floor is read on a lattice this fine (mm): a washer's ring is 16 mm wide, and the shares below need no
/// finer count (placing a washer by its colour reads every half millimetre).
const EMPTY_CUP_CELL_MM: f64 = 1.0;
/// A cup's floor shows a washer lying flat on it when at least this share of a washer's area is in view (half a
/// washer: the rest may lie under the rim) ...
const EMPTY_CUP_MIN_SEEN: f64 = 0.5;
/// ... and an empty one when less than this share of a washer's area has the team's colour: a washer flat in view
/// there shows at least half its ring (about 40 % of its disc's area), the floor's shading and a neighbour's
/// colour fringe a few per cent.
const EMPTY_CUP_MAX_PAINT: f64 = 0.05;

/// A washer on a cup's floor whose outline the rim (or a washer over it)
/// hides too much to fit: placed where the washer's ring best covers the
/// team's colour seen on the floor and its surroundings show none. The cup
/// floor is sampled once on a half-millimetre lattice (line of sight and
/// colour); every centre the cup allows is scored by the points of its
/// ring in view that have the team's colour, less those that have not,
/// less the team-coloured points in view just outside it. The position's
/// uncertainty is [`CUP_TEMPLATE_SIGMA_MM`].
pub(super) fn cup_template(cx: &Ctx, w: &WasherBoard, hole: usize, class: usize) -> Option<CircleFit> {
    cup_template_in(cx, w, hole, class, cx.colour(class)?)
}

/// [`cup_template`] with the washer's paint told by `colour` (a team's colour, or the paler paint of its hue:
/// [`super::washer`]'s pale washers); the other teams' colours still hide it where they cover the floor.
pub(super) fn cup_template_in(cx: &Ctx, w: &WasherBoard, hole: usize, class: usize, colour: ColourClass) -> Option<CircleFit> {
    let (r, r_in) = (cx.geo.shape.radius_mm, w.washer_inner_diameter_mm / 2.0);
    let bottom_top = -w.cup_depth_mm + w.washer_thickness_mm;
    let h = w.holes[hole];
    let reach = (h.radius() - r).max(0.0);
    // The floor lattice, cells of CUP_TEMPLATE_CELL_MM over the hole: true = the team's colour
    // in view, false = in view and not, None = hidden (by the rim, or by
    // another team's washer over it).
    let cell = CUP_TEMPLATE_CELL_MM;
    let half = (h.radius() / cell).ceil() as i32 + 1;
    let side = (2 * half + 1) as usize;
    let cell_at = |dx: i32, dy: i32| -> Option<bool> {
        let p = BoardPoint3::new(h.x_mm + dx as f64 * cell, h.y_mm + dy as f64 * cell, bottom_top);
        if (dx as f64).hypot(dy as f64) * cell > h.radius() || !cx.sees(p) {
            return None;
        }
        let hsv = cx.hsv_at(p)?;
        // Too dark to tell a colour (the cup's own shadow over the floor): neither the washer nor not.
        if hsv[2] < colour.min_value {
            return None;
        }
        // Another team's washer over this one hides it there.
        let other = cx.teams.iter().enumerate().any(|(k, t)| k != class && t.colour.contains(hsv));
        (!other).then(|| colour.contains(hsv))
    };
    // Row by row on the machine's cores (each cell a line of sight traced past the rim and the pieces).
    let rows: Vec<i32> = (-half..=half).collect();
    let floor: Vec<Option<bool>> =
        crate::parallel::map_in_order(&rows, |_: &mut (), &dy| (-half..=half).map(|dx| cell_at(dx, dy)).collect::<Vec<_>>()).into_iter().flatten().collect();
    let at = |x: f64, y: f64| -> Option<bool> {
        let (dx, dy) = (((x - h.x_mm) / cell).round() as i32, ((y - h.y_mm) / cell).round() as i32);
        if dx.abs() > half || dy.abs() > half {
            return None;
        }
        floor[((dy + half) as usize) * side + (dx + half) as usize]
    };
    // Ring points (on the washer, between its hole and its edge) and points
    // just outside its edge, as offsets from its centre.
    let ring: Vec<(f64, f64)> = (0..CUP_TEMPLATE_ANGLES)
        .flat_map(|k| {
            let t = std::f64::consts::TAU * k as f64 / CUP_TEMPLATE_ANGLES as f64;
            [r_in + CUP_TEMPLATE_INSET_MM, (r_in + r) / 2.0, r - CUP_TEMPLATE_INSET_MM].map(|rho| (rho * t.cos(), rho * t.sin()))
        })
        .collect();
    let outside: Vec<(f64, f64)> = (0..CUP_TEMPLATE_ANGLES)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / CUP_TEMPLATE_ANGLES as f64;
            ((r + CUP_TEMPLATE_INSET_MM) * t.cos(), (r + CUP_TEMPLATE_INSET_MM) * t.sin())
        })
        .collect();
    // Every centre of the best score; their mean is the answer (a ring half
    // hidden scores the same over a small patch of centres).
    let mut best: Option<(i32, Vec<(usize, usize, BoardPoint)>)> = None;
    let n = (reach / cell).floor() as i32;
    // Each centre's (score, hits, misses), row by row on the machine's cores; taken in the rows' order.
    let rows: Vec<i32> = (-n..=n).collect();
    let scored = crate::parallel::map_in_order(&rows, |_: &mut (), &dy| {
        (-n..=n)
            .filter(|dx| !((*dx as f64).hypot(dy as f64) * cell > reach))
            .map(|dx| {
                let c = BoardPoint::new(h.x_mm + dx as f64 * cell, h.y_mm + dy as f64 * cell);
                let (mut hits, mut misses) = (0usize, 0usize);
                for o in &ring {
                    match at(c.x_mm + o.0, c.y_mm + o.1) {
                        Some(true) => hits += 1,
                        Some(false) => misses += 1,
                        None => {}
                    }
                }
                let stray = outside.iter().filter(|o| at(c.x_mm + o.0, c.y_mm + o.1) == Some(true)).count();
                (hits as i32 - misses as i32 - stray as i32, hits, misses, c)
            })
            .collect::<Vec<_>>()
    });
    for (score, hits, misses, c) in scored.into_iter().flatten() {
        match &mut best {
            Some((s, at)) if *s == score => at.push((hits, misses, c)),
            Some((s, _)) if *s > score => {}
            _ => best = Some((score, vec![(hits, misses, c)])),
        }
    }
    let (_, tied) = best?;
    let hits = tied.iter().map(|t| t.0).min()?;
    let misses = tied.iter().map(|t| t.1).max()?;
    let centre = BoardPoint::new(
        tied.iter().map(|t| t.2.x_mm).sum::<f64>() / tied.len() as f64,
        tied.iter().map(|t| t.2.y_mm).sum::<f64>() / tied.len() as f64,
    );
    if (hits as f64) < CUP_TEMPLATE_MIN_HITS * ring.len() as f64 || (hits as f64) < CUP_TEMPLATE_MIN_MATCH * (hits + misses) as f64 {
        return None;
    }
    let mm_per_px = cx.mm_per_px(centre.at_height(bottom_top));
    Some(CircleFit {
        footprint: Footprint::new(centre, r),
        height_mm: bottom_top,
        rms_mm: 0.0,
        centre_sigma_mm: CUP_TEMPLATE_SIGMA_MM,
        inliers: 0,
        probes: 0,
        mm_per_px,
        edges: Vec::new(),
    })
}
