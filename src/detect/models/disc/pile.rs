//! A pile of discs, told by two measures that must agree: the size of its top (a pile's top lies nearer the camera
//! than one disc's and its outline images larger by as much) and the height of its side seen past the top's rim. The
//! jury piles the discs in fours between sub-turns (the rules, article 2 f), and a disc comes to rest on another;
//! seen from above a pile shows its top only.
//!
//! Neither measure alone is safe: a disc's shadow cast towards the camera lengthens the dark band past its rim as a
//! pile's side would (own scenes 19 and 21: single discs read as piles of two by the band), and the size depends on
//! the disc's true size and the camera's scale (real photo 152655, its camera set up from four typed points: discs
//! lying flat read 1.5-3.7 discs high by their size). A shadow leaves the size alone, a scale error the band; and the
//! sizes count only in a frame whose discs read whole numbers of discs high by them (a disc rests on the surface or on
//! whole discs: [`sizes_read_whole_discs`]).

use super::*;
use crate::detect::MeasuredBy;
use crate::geom::{BoardPoint3, PixelPoint};
use crate::measure::MIN_EDGE_CONTRAST;

/// Most discs in one pile counted: the jury's four, and one more come to rest on them.
const MAX_PILE: usize = 5;
/// A disc read lying flat is measured again for a pile where its outline's size puts its top at least this many
/// discs high (a pile of two: 2): half way to a pile of two, clear of a single disc's scatter (own and varied
/// renders: 0.7-1.4 discs).
const PILE_SCREEN_DISCS: f64 = 1.5;
/// Where a frame's sizes count ([`sizes_read_whole_discs`]), a disc read lying flat whose size puts its top lower
/// than this many discs is in doubt: half way between the board (0) and one disc (1), clear of a single disc's
/// scatter (own and varied renders: 0.7-1.4 discs).
const MIN_FLAT_DISCS: f64 = 0.5;
/// A pile of k discs is read only where its top's size puts it at least this many of the size's standard
/// uncertainties above a pile of k - 1 (its top a disc lower): the size's uncertainty takes in the edges' scatter
/// and a quarter pixel's bias of the radius, so at a few pixels a millimetre a pile is told from the next lower
/// one, and at a pixel for two millimetres (the external renders) never.
const PILE_EXCLUDES_SIGMAS: f64 = 2.0;

/// A frame's sizes are trusted to count piles only where at least this many discs read lying flat show that they
/// measure whole discs ([`sizes_read_whole_discs`]) ...
const MIN_FRAME_DISCS: usize = 3;
/// ... their heights by their size at most this far from a whole number of discs at the median: sizes that scatter
/// by a sixth of a disc (three of it within half a disc) put the median 0.11 from it. Own and varied renders of piles
/// and single discs: 0.01-0.10 (0.13-0.16 on own 18 and 23 and varied 14's own discs, and 0.19 under a low light
/// from beyond the board: no piles read there); the real photos set up from typed points: 0.13-0.44 (a fraction
/// spread evenly gives 0.25).
const MAX_FRAME_FRACTION: f64 = 0.11;

/// Where a disc is placed under the top of a pile, its standard uncertainty (mm) beyond the top's: a disc rests on
/// another only with its centre over it, anywhere within a radius (uniform over a diameter).
fn hidden_sigma_mm(radius_mm: f64) -> f64 {
    super::super::uniform_sigma_mm(2.0 * radius_mm)
}

impl DiscModel {
    /// Discs read lying flat (without doubt, where a disc may count) whose outline's size says their top lies one
    /// disc or more higher ([`Ctx::height_from_size`], measured again with its radius free): the top of a pile of
    /// the whole number of discs that height is, where it is at least [`PILE_EXCLUDES_SIGMAS`] above a pile of one
    /// disc fewer and its side, seen past the rim, is as high ([`DiscModel::side_height`]). The top is measured
    /// again at its height ([`DiscModel::rim_at`], clear of the partitions and walls) and the discs under it
    /// counted: hidden, each placed under it and in doubt (the top is flagged in `settle`: it rests on others).
    /// Where the top does not fit at that height, the disc read flat is in doubt.
    pub(super) fn read_piles(&self, cx: &Ctx, out: &mut Detections) {
        let (r, t) = (self.shape.radius_mm, self.shape.top_z_mm);
        // The discs read lying flat, without doubt, where a disc may count, each with the height (in discs) that the
        // outline radius its detection kept says (its edges' scatter is the centre fit's: a screen only).
        let flat: Vec<(usize, f64)> = out
            .pieces
            .iter()
            .enumerate()
            .filter(|(_, d)| self.lies_flat(d) && d.doubt.is_none() && self.may_count(d.footprint.centre))
            .filter_map(|(i, d)| cx.height_from_outline(d, r).map(|(z, _)| (i, z / t)))
            .collect();
        // A view in which the size cannot tell one disc more says so: the discs counted may lie on others it does
        // not see (the jury piles the discs in the compartments between sub-turns). Each disc's own size is still
        // read below, and a pile it tells is counted.
        if let Some(doubt) = self.piles_unseen(cx, out, &flat) {
            out.doubts.push(doubt);
        }
        if !sizes_read_whole_discs(flat.iter().map(|(_, h)| *h)) {
            return;
        }
        // Where the sizes count, one that puts a disc's top under half a disc high is no disc lying on the board
        // (its outline is part of a rim, or a pile's top fitted elsewhere: varied 16's pile of three read 15 mm off,
        // 0.27 discs high): in doubt, never counted silently.
        for &(i, h) in flat.iter().filter(|(_, h)| *h < MIN_FLAT_DISCS) {
            out.pieces[i].add_doubt(format!("its outline's size puts its top {h:.2} discs high, lower than a disc lying on the board: not the disc's whole rim?"));
        }
        let mut hidden = Vec::new();
        for &(i, _) in flat.iter().filter(|(_, h)| *h >= PILE_SCREEN_DISCS) {
            let centre = out.pieces[i].footprint.centre;
            let Ok(fit) = cx.fit(Footprint::new(centre, r), t, 0) else { continue };
            let (z, sigma) = cx.height_from_size(&fit, r);
            let (discs, sigma_discs) = (z / t, sigma / t);
            let k = discs.round();
            if k < 2.0 || k > MAX_PILE as f64 || (discs - k).abs() > WHOLE_DISCS || discs - (k - 1.0) < PILE_EXCLUDES_SIGMAS * sigma_discs {
                continue;
            }
            let k = k as usize;
            // The side must say the same.
            let others: Vec<BoardPoint> = out.pieces.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, p)| cx.seen_on_grid(p)).collect();
            let side = self.side_height(cx, &out.pieces[i], &others);
            let Some(side) = side.filter(|b| b.agrees_with(k)) else {
                // The size alone says a pile, and the side does not confirm it (unread: the camera looks down too
                // steeply, or too little of the side is clear of its neighbours; or read otherwise: a shadow across
                // it): counted as one disc, in doubt, never silently one (own scene 21's pile of two, 2.06 discs
                // high by its size, sigma 0.28).
                let said = side.map_or("cannot be read".to_owned(), |b| format!("reads {:.1} discs (spread {:.1})", b.discs, b.spread));
                out.pieces[i].add_doubt(format!(
                    "its outline's size puts its top {discs:.1} discs high (sigma {sigma_discs:.1}) and its side {said}: a pile of {k} counted as one disc?"
                ));
                continue;
            };
            let Some(top) = self.rim_at(cx, centre, t * k as f64).filter(|u| self.into_solid(u.footprint.centre).is_none()) else {
                out.pieces[i].add_doubt(format!(
                    "its outline's size and its side put its top {discs:.1} discs high (sigma {sigma_discs:.1}): a pile, whose top does not fit at that height"
                ));
                continue;
            };
            let why = format!(
                "hidden in a pile of {k} discs, counted from the size of the pile's top ({discs:.2} discs high, sigma {sigma_discs:.2}) and its side's height ({:.2} discs), placed under it",
                side.discs
            );
            for below in 1..k {
                hidden.push(Detection {
                    kind: self.shape.kind,
                    team: None,
                    footprint: Footprint::new(top.footprint.centre, r),
                    top_z_mm: t * below as f64,
                    tilt_deg: 0.0,
                    sigma_mm: top.sigma_mm.hypot(hidden_sigma_mm(r)),
                    fit_rms_mm: 0.0,
                    edges_found: 0,
                    probes: 0,
                    mm_per_px: top.mm_per_px,
                    doubt: Some(why.clone()),
                    measured_by: MeasuredBy::PileTop,
                    outline_radius_mm: None,
                });
            }
            out.pieces[i] = top;
        }
        out.pieces.extend(hidden);
    }

    /// Where the outline's size cannot tell a disc lying flat from the top of a pile of two in this view (its least
    /// uncertainty, [`Ctx::height_from_size_floor_mm`], more than a disc's thickness over [`PILE_EXCLUDES_SIGMAS`]
    /// at the discs `flat` read lying flat where a disc may count), why the frame's counts are in doubt: a pile's
    /// lower discs hide under its top, and only its top's size (and its side, which a shadow lengthens as well)
    /// tells it. The external renders: a pile of three's top images 0.1 px larger than one disc's, under the
    /// quarter pixel an outline's radius is known to; their compartments count 2 of 6 discs. `None` where it can (own scene 16: 5.8 mm
    /// at most, against 6.5), or where no disc lies flat where one may count.
    fn piles_unseen(&self, cx: &Ctx, out: &Detections, flat: &[(usize, f64)]) -> Option<String> {
        let (r, t) = (self.shape.radius_mm, self.shape.top_z_mm);
        let floors: Vec<f64> = flat.iter().filter_map(|&(i, _)| cx.height_from_size_floor_mm(out.pieces[i].footprint.centre.at_height(t), r)).collect();
        let worst = floors.iter().copied().fold(f64::NAN, f64::max);
        (worst * PILE_EXCLUDES_SIGMAS > t).then(|| {
            format!(
                "the discs counted may lie on others this view cannot see: one disc more under a disc puts its top {t:.0} mm higher, and the outline's size measures a top's height to {worst:.0} mm at best here (sigma, {} discs read lying flat); a pile's lower discs are hidden",
                floors.len()
            )
        })
    }
}

/// Whether a frame's discs read lying flat measure whole numbers of discs high by their outline's size (`heights`, in
/// discs: [`Ctx::height_from_outline`]): at least [`MIN_FRAME_DISCS`] of them, the median of their heights' distances
/// from the nearest whole number of discs at most [`MAX_FRAME_FRACTION`]. A disc rests on the surface or on whole
/// discs, so where the sizes read otherwise the camera's scale or the discs' true size is off (real photo 152655, its
/// camera set up from four typed points: flat discs 1.5-2.5 discs high, 0.44 of a disc from a whole number at the
/// median), and a size's height counts for nothing there. (With both measures needed, no real photo read a pile
/// either way; this keeps a side that a shadow lengthens from deciding alone where the size says nothing: real photo
/// 153016's disc at (171, 154) read 2.22 discs by its size, 2.21 by its side, spread 0.33.)
fn sizes_read_whole_discs(heights: impl Iterator<Item = f64>) -> bool {
    let mut off: Vec<f64> = heights.map(|h| (h - h.round()).abs()).collect();
    off.len() >= MIN_FRAME_DISCS && median(&mut off) <= MAX_FRAME_FRACTION
}

/// The side is read round the part of the rim that faces the camera, within this angle (degrees) of the direction
/// from the disc to the camera's foot: further round, the side is seen edge-on and its foot runs along the rim.
const SIDE_HALF_ANGLE_DEG: f64 = 60.0;
/// Profiles read across that arc.
const SIDE_PROFILES: usize = 25;
/// One disc's side must image at least this wide (px) at the rim facing the camera for a pile's side to be read: one
/// disc more or less then moves the foot by more than the blur's reach (a pre-blurred edge is some 2.4 px wide at
/// half height).
const MIN_DISC_SIDE_PX: f64 = 2.0;
/// Each profile is read every this many pixels.
const PROFILE_STEP_PX: f64 = 0.5;
/// A profile starts this share of the disc's imaged radius inside the rim read flat and its rim is looked for within
/// twice that: a pile's top images a few per cent larger than one disc's, and the flat fit's circle splits the
/// difference (own renders: a pile of four, 4.5 px off on the rim facing the camera, at 39 px a radius).
const RIM_SEARCH_RADII: f64 = 0.2;
/// A profile reads this far (px) past the foot of the highest pile looked for: the board beyond it.
const BOARD_BEYOND_PX: f64 = 3.0;
/// Of the profiles tried, at least this share must read a side: the rest run off the frame, end on a solid or
/// another disc, or show no side (its colour the board's or the top's).
const MIN_PROFILES_READ: f64 = 0.5;
/// A profile whose board beyond the highest pile's foot lies within this (mm) of another disc's rim is not read:
/// that disc's own side and rim would end the stretch taken for the board.
const NEIGHBOUR_CLEARANCE_MM: f64 = 5.0;
/// The size and the side each say a pile of k discs where the height they measure is within this of k discs (own
/// renders: piles of two to four, the size within 0.1 of it, the side within 0.25; real photo 153016, its camera set
/// up from four typed points: a disc lying flat read 1.60 discs high by its size and 1.72 by its side) ...
const WHOLE_DISCS: f64 = 0.35;
/// ... and the side's profiles agree within this (their median absolute deviation, discs): a pile's side is its height all
/// round the arc facing the camera, a cast shadow's reach past it is not (own renders: piles of one to four discs
/// read within 0.13; under soft lights, on the external renders, single discs spread 0.4-1.6).
const SIDE_MAX_SPREAD: f64 = 0.25;

/// The height of a disc's side seen past its rim, in discs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SideHeight {
    /// The median over the profiles of the side's imaged length over one disc's side's there.
    pub discs: f64,
    /// The profiles' median absolute deviation from it, in discs.
    pub spread: f64,
}

impl SideHeight {
    /// Whether the side is `k` discs high, all round.
    fn agrees_with(&self, k: usize) -> bool {
        (self.discs - k as f64).abs() <= WHOLE_DISCS && self.spread <= SIDE_MAX_SPREAD
    }
}

impl DiscModel {
    /// The height of disc `d`'s side (read lying flat), seen past its rim: along profiles from the rim towards the
    /// camera's foot, a pile shows its top, then its side, then the board, each of its own colour; each profile is
    /// split at the two changes that best explain it as three such stretches ([`three_stretches`]) and the side's
    /// length there taken over one disc's side's. `None` where the camera looks down too steeply for one disc's
    /// side to show ([`MIN_DISC_SIDE_PX`]) or too few profiles read a side ([`MIN_PROFILES_READ`]). `others`: where
    /// the other discs are seen on the grid.
    pub(super) fn side_height(&self, cx: &Ctx, d: &Detection, others: &[BoardPoint]) -> Option<SideHeight> {
        let (r, t) = (self.shape.radius_mm, self.shape.top_z_mm);
        let (camera, pose) = (&cx.geo.camera, &cx.geo.pose);
        let eye = pose.centre();
        let c1 = d.footprint.centre;
        let to_eye = (eye.y_mm - c1.y_mm).atan2(eye.x_mm - c1.x_mm);
        let margin = RIM_SEARCH_RADII * r * crate::measure::px_per_mm(camera, pose, c1.at_height(t))?;
        // The top of the highest pile looked for, seen where this disc's top is: along the line of sight.
        let highest = cx.along_sight(c1.at_height(t), t * MAX_PILE as f64)?;
        let mut ratios = Vec::new();
        for i in 0..SIDE_PROFILES {
            let a = to_eye + SIDE_HALF_ANGLE_DEG.to_radians() * (2.0 * i as f64 / (SIDE_PROFILES - 1) as f64 - 1.0);
            let (s, c) = a.sin_cos();
            // The board the profile ends on must be the board's: not a partition's, a wall's or the gate bar's face,
            // nor another disc.
            let beyond = BoardPoint::new(highest.x_mm + r * c, highest.y_mm + r * s);
            if !self.may_rest(beyond) || self.by_solid(beyond) || others.iter().any(|o| o.distance(beyond) < r + NEIGHBOUR_CLEARANCE_MM) {
                continue;
            }
            let (Some(rim), Some(foot), Some(last)) = (
                pose.project(camera, BoardPoint3::new(c1.x_mm + r * c, c1.y_mm + r * s, t)),
                pose.project(camera, BoardPoint3::new(c1.x_mm + r * c, c1.y_mm + r * s, 0.0)),
                pose.project(camera, beyond.at_height(0.0)),
            ) else {
                continue;
            };
            // One disc's side as imaged here.
            let one = rim.distance(foot);
            let reach = rim.distance(last);
            if one < MIN_DISC_SIDE_PX || reach < one {
                continue;
            }
            let dir = [(last.u - rim.u) / reach, (last.v - rim.v) / reach];
            let n = ((margin + reach + BOARD_BEYOND_PX) / PROFILE_STEP_PX).ceil() as usize;
            let profile: Option<Vec<[f32; 3]>> = (0..=n)
                .map(|j| {
                    let o = j as f64 * PROFILE_STEP_PX - margin;
                    cx.frame.sample(PixelPoint::new(rim.u + o * dir[0], rim.v + o * dir[1]))
                })
                .collect();
            let Some(profile) = profile else { continue };
            let rim_within = ((2.0 * margin) / PROFILE_STEP_PX).ceil() as usize;
            if let Some((at_rim, at_foot)) = three_stretches(&profile, rim_within) {
                ratios.push((at_foot - at_rim) as f64 * PROFILE_STEP_PX / one);
            }
        }
        if (ratios.len() as f64) < MIN_PROFILES_READ * SIDE_PROFILES as f64 {
            return None;
        }
        let discs = median(&mut ratios.clone());
        let spread = median(&mut ratios.iter().map(|q| (q - discs).abs()).collect::<Vec<_>>());
        Some(SideHeight { discs, spread })
    }
}

/// The median of `v` (not empty), reordering it.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The two changes (sample indices: the first of the second stretch, the first of the third) that split `profile`
/// into three stretches of even colour with the least squared error, the first within `rim_within` samples of the
/// start; `None` unless the middle stretch differs from both others by [`MIN_EDGE_CONTRAST`].
fn three_stretches(profile: &[[f32; 3]], rim_within: usize) -> Option<(usize, usize)> {
    let n = profile.len();
    if n < 4 {
        return None;
    }
    // Prefix sums of each channel and of the squared values.
    let mut sum = vec![[0.0f64; 3]; n + 1];
    let mut sq = vec![0.0f64; n + 1];
    for (i, p) in profile.iter().enumerate() {
        for k in 0..3 {
            sum[i + 1][k] = sum[i][k] + p[k] as f64;
        }
        sq[i + 1] = sq[i] + p.iter().map(|v| (*v as f64).powi(2)).sum::<f64>();
    }
    let mean = |a: usize, b: usize| -> [f64; 3] { [0, 1, 2].map(|k| (sum[b][k] - sum[a][k]) / (b - a) as f64) };
    // The squared error of stretch a..b about its mean.
    let err = |a: usize, b: usize| -> f64 {
        let m = mean(a, b);
        (sq[b] - sq[a]) - (b - a) as f64 * m.iter().map(|v| v * v).sum::<f64>()
    };
    let mut best: Option<(f64, usize, usize)> = None;
    for a in 1..=rim_within.min(n - 2) {
        let head = err(0, a);
        for b in a + 1..n {
            let e = head + err(a, b) + err(b, n);
            if best.is_none_or(|(be, _, _)| e < be) {
                best = Some((e, a, b));
            }
        }
    }
    let (_, a, b) = best?;
    let apart = |x: [f64; 3], y: [f64; 3]| (0..3).map(|k| (x[k] - y[k]).powi(2)).sum::<f64>().sqrt();
    let (top, side, board) = (mean(0, a), mean(a, b), mean(b, n));
    (apart(top, side) >= MIN_EDGE_CONTRAST as f64 && apart(side, board) >= MIN_EDGE_CONTRAST as f64).then_some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes count where the frame's discs read whole numbers of discs: the piles of one to four of the suite's
    /// `a_pile_of_discs_is_counted_from_the_size_of_its_top` (their distances from a whole number as measured: 0.06,
    /// 0.06, 0.05, 0.09) do; real photo 152655's ten flat discs (set up from typed points; as measured, 0.08-0.48)
    /// do not, nor two discs alone.
    #[test]
    fn sizes_count_only_where_the_frames_discs_read_whole_numbers() {
        let heights = |off: &[f64]| off.iter().enumerate().map(|(k, f)| (k % 4 + 1) as f64 + f).collect::<Vec<_>>();
        assert!(sizes_read_whole_discs(heights(&[0.06, 0.06, 0.05, 0.09]).into_iter()));
        assert!(!sizes_read_whole_discs(heights(&[0.47, 0.44, 0.17, 0.18, 0.24, 0.48, 0.47, 0.38, 0.08, 0.47]).into_iter()));
        assert!(!sizes_read_whole_discs(heights(&[0.0, 0.0]).into_iter()), "two discs say too little");
    }
}
