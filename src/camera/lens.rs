//! Lens models: OpenCV's standard Brown-Conrady model (k1 k2 p1 p2 k3, and the rational k4 k5 k6) and its
//! fisheye model (Kannala-Brandt, `cv::fisheye`: k1..k4 on the angle from the axis), each mapping a normalised
//! pinhole point (`x/z`, `y/z`) to its distorted position and back.
//!
//! The formulas are OpenCV's, term for term: `calib3d::projectPoints` for [`BrownConrady`] and
//! `fisheye::projectPoints` for [`KannalaBrandt`] (both with zero skew), so a camera file from OpenCV's tools means
//! the same here. The fisheye model covers rays up to 90 degrees from the axis (a field of up to 180 degrees), as
//! OpenCV's does: its normalised coordinates are those of the pinhole image, which ends there.

use serde::{Deserialize, Serialize};

/// Undistortion stops when a Newton step moves the normalised point by less than
/// this: 1e-14 is ~1e-11 px at any focal length a real camera has.
const UNDISTORT_STEP_TOL: f64 = 1e-14;
/// Newton converges in a handful of steps inside the image; this bounds the loop
/// where the distortion polynomial folds back (far outside the calibrated field).
const UNDISTORT_MAX_ITER: usize = 50;
/// An undistorted point is accepted when it distorts back to within this of the
/// input (normalised units: ~1e-7 px at any real focal length).
const UNDISTORT_RESIDUAL_TOL: f64 = 1e-10;
/// Below this Jacobian determinant (or fisheye angle slope) the model has folded:
/// the point has no unique undistorted position.
const FOLD_TOL: f64 = 1e-12;

/// Which lens model a camera uses (OpenCV's names in camera files: see `docs/camera.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LensModel {
    /// Brown-Conrady (`calib3d`): ROS's `plumb_bob` (5 coefficients) and `rational_polynomial` (8).
    #[default]
    #[serde(alias = "plumb_bob", alias = "rational_polynomial")]
    Brown,
    /// Kannala-Brandt (`cv::fisheye`): ROS's `equidistant`.
    #[serde(alias = "equidistant", alias = "kannala_brandt")]
    Fisheye,
}

impl LensModel {
    /// The model's name in files and messages.
    pub fn name(self) -> &'static str {
        match self {
            LensModel::Brown => "brown",
            LensModel::Fisheye => "fisheye",
        }
    }
}

/// OpenCV's standard model: radial distortion as the rational function
/// `(1 + k1 r^2 + k2 r^4 + k3 r^6) / (1 + k4 r^2 + k5 r^4 + k6 r^6)` plus tangential `p1`, `p2`.
/// With `k4 = k5 = k6 = 0` it is the classic 5-coefficient model.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BrownConrady {
    pub k1: f64,
    pub k2: f64,
    pub p1: f64,
    pub p2: f64,
    pub k3: f64,
    pub k4: f64,
    pub k5: f64,
    pub k6: f64,
}

/// OpenCV's fisheye model: a ray at angle `theta` from the axis lands at distance
/// `theta_d = theta (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8)` (normalised units) from the centre.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KannalaBrandt {
    pub k1: f64,
    pub k2: f64,
    pub k3: f64,
    pub k4: f64,
}

/// A camera's lens distortion in one of OpenCV's two models.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DistortionFields", into = "DistortionFields")]
pub enum Distortion {
    Brown(BrownConrady),
    Fisheye(KannalaBrandt),
}

impl Default for Distortion {
    /// No distortion: an ideal pinhole camera.
    fn default() -> Self {
        Distortion::NONE
    }
}

impl BrownConrady {
    /// The coefficients in OpenCV's order: 5 of them, or 8 when the rational terms are used.
    pub fn coefficients(&self) -> Vec<f64> {
        let mut c = vec![self.k1, self.k2, self.p1, self.p2, self.k3];
        if self.is_rational() {
            c.extend([self.k4, self.k5, self.k6]);
        }
        c
    }

    /// Whether the rational denominator (`k4`, `k5`, `k6`) is in use.
    pub fn is_rational(&self) -> bool {
        [self.k4, self.k5, self.k6].iter().any(|k| *k != 0.0)
    }

    /// The radial factor and its derivative with respect to `r^2`.
    #[inline]
    fn radial(&self, r2: f64) -> (f64, f64) {
        let a = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3));
        let da = self.k1 + r2 * (2.0 * self.k2 + 3.0 * r2 * self.k3);
        if !self.is_rational() {
            return (a, da);
        }
        let b = 1.0 + r2 * (self.k4 + r2 * (self.k5 + r2 * self.k6));
        let db = self.k4 + r2 * (2.0 * self.k5 + 3.0 * r2 * self.k6);
        (a / b, (da * b - a * db) / (b * b))
    }

    /// Applies the distortion to a normalised point.
    #[inline]
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let r2 = x * x + y * y;
        let (radial, _) = self.radial(r2);
        let xd = x * radial + 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y;
        (xd, yd)
    }

    /// The Jacobian of [`BrownConrady::distort`] at `(x, y)`: `[[dxd/dx, dxd/dy], [dyd/dx, dyd/dy]]`.
    fn jacobian(&self, x: f64, y: f64) -> [[f64; 2]; 2] {
        let r2 = x * x + y * y;
        let (radial, dradial_dr2) = self.radial(r2);
        let (dr2x, dr2y) = (2.0 * x, 2.0 * y);
        let dxd_dx = radial + x * dradial_dr2 * dr2x + 2.0 * self.p1 * y + self.p2 * (dr2x + 4.0 * x);
        let dxd_dy = x * dradial_dr2 * dr2y + 2.0 * self.p1 * x + self.p2 * dr2y;
        let dyd_dx = y * dradial_dr2 * dr2x + self.p1 * dr2x + 2.0 * self.p2 * y;
        let dyd_dy = radial + y * dradial_dr2 * dr2y + self.p1 * (dr2y + 4.0 * y) + 2.0 * self.p2 * x;
        [[dxd_dx, dxd_dy], [dyd_dx, dyd_dy]]
    }

    /// Inverts [`BrownConrady::distort`] by Newton's method; `None` where it does not
    /// converge (outside the region where the model is invertible).
    pub fn undistort(&self, xd: f64, yd: f64) -> Option<(f64, f64)> {
        let (mut x, mut y) = (xd, yd);
        for _ in 0..UNDISTORT_MAX_ITER {
            let (fx, fy) = self.distort(x, y);
            let (ex, ey) = (fx - xd, fy - yd);
            let [[a, b], [c, d]] = self.jacobian(x, y);
            let det = a * d - b * c;
            if !det.is_finite() || det.abs() < FOLD_TOL {
                return None;
            }
            let sx = (d * ex - b * ey) / det;
            let sy = (-c * ex + a * ey) / det;
            x -= sx;
            y -= sy;
            if sx.hypot(sy) < UNDISTORT_STEP_TOL {
                let (fx, fy) = self.distort(x, y);
                return ((fx - xd).hypot(fy - yd) < UNDISTORT_RESIDUAL_TOL).then_some((x, y));
            }
        }
        None
    }
}

impl KannalaBrandt {
    /// The coefficients in OpenCV's order (`cv::fisheye`'s `D`).
    pub fn coefficients(&self) -> [f64; 4] {
        [self.k1, self.k2, self.k3, self.k4]
    }

    /// `theta_d` of a ray at `theta` from the axis, and its derivative.
    #[inline]
    fn theta_d(&self, theta: f64) -> (f64, f64) {
        let t2 = theta * theta;
        let poly = 1.0 + t2 * (self.k1 + t2 * (self.k2 + t2 * (self.k3 + t2 * self.k4)));
        let slope = 1.0 + t2 * (3.0 * self.k1 + t2 * (5.0 * self.k2 + t2 * (7.0 * self.k3 + t2 * 9.0 * self.k4)));
        (theta * poly, slope)
    }

    /// Applies the distortion to a normalised point (OpenCV's `fisheye::projectPoints`).
    #[inline]
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let r = x.hypot(y);
        if r == 0.0 {
            return (x, y);
        }
        let (theta_d, _) = self.theta_d(r.atan());
        let s = theta_d / r;
        (x * s, y * s)
    }

    /// The angle from the axis (radians, below 90 degrees) of the ray that lands at
    /// `theta_d`; `None` where the model folds or the ray would be 90 degrees or more off axis.
    pub fn theta(&self, theta_d: f64) -> Option<f64> {
        let half_pi = std::f64::consts::FRAC_PI_2;
        // Newton inside a bracket [lo, hi] with theta_d(lo) <= theta_d < theta_d(hi), bisecting where a step
        // would leave it: a strong lens's Newton step from near 90 degrees can land beyond the fold.
        let (mut lo, mut hi) = (0.0, half_pi);
        if !(self.theta_d(hi).0 > theta_d) {
            return None;
        }
        let mut theta = theta_d.min(0.5 * half_pi);
        for _ in 0..2 * UNDISTORT_MAX_ITER {
            let (f, slope) = self.theta_d(theta);
            if f <= theta_d {
                lo = theta;
            } else {
                hi = theta;
            }
            let newton = theta - (f - theta_d) / slope;
            let next = if slope > FOLD_TOL && newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
            let step = (next - theta).abs();
            theta = next;
            if step < UNDISTORT_STEP_TOL {
                break;
            }
        }
        let (f, slope) = self.theta_d(theta);
        ((f - theta_d).abs() < UNDISTORT_RESIDUAL_TOL && slope >= FOLD_TOL && theta < half_pi).then_some(theta)
    }

    /// Inverts [`KannalaBrandt::distort`] (OpenCV's `fisheye::undistortPoints`, to full precision); `None` where
    /// the ray is 90 degrees or more off axis (no pinhole point) or the model folds.
    pub fn undistort(&self, xd: f64, yd: f64) -> Option<(f64, f64)> {
        let theta_d = xd.hypot(yd);
        if theta_d == 0.0 {
            return Some((xd, yd));
        }
        let s = self.theta(theta_d)?.tan() / theta_d;
        Some((xd * s, yd * s))
    }
}

impl Distortion {
    /// No distortion at all (Brown-Conrady with zero coefficients).
    pub const NONE: Distortion =
        Distortion::Brown(BrownConrady { k1: 0.0, k2: 0.0, p1: 0.0, p2: 0.0, k3: 0.0, k4: 0.0, k5: 0.0, k6: 0.0 });

    /// The classic 5-coefficient Brown-Conrady lens, in OpenCV's order.
    pub const fn brown(k1: f64, k2: f64, p1: f64, p2: f64, k3: f64) -> Distortion {
        Distortion::Brown(BrownConrady { k1, k2, p1, p2, k3, k4: 0.0, k5: 0.0, k6: 0.0 })
    }

    /// A fisheye (Kannala-Brandt) lens, in OpenCV's order.
    pub const fn fisheye(k1: f64, k2: f64, k3: f64, k4: f64) -> Distortion {
        Distortion::Fisheye(KannalaBrandt { k1, k2, k3, k4 })
    }

    /// The Brown-Conrady coefficients, if that is the model.
    pub fn as_brown(&self) -> Option<&BrownConrady> {
        match self {
            Distortion::Brown(b) => Some(b),
            Distortion::Fisheye(_) => None,
        }
    }

    /// The fisheye coefficients, if that is the model.
    pub fn as_fisheye(&self) -> Option<&KannalaBrandt> {
        match self {
            Distortion::Fisheye(f) => Some(f),
            Distortion::Brown(_) => None,
        }
    }

    pub fn model(&self) -> LensModel {
        match self {
            Distortion::Brown(_) => LensModel::Brown,
            Distortion::Fisheye(_) => LensModel::Fisheye,
        }
    }

    /// The coefficients as OpenCV's functions for this model take them: Brown-Conrady 5 (or 8 when rational),
    /// fisheye 4.
    pub fn coefficients(&self) -> Vec<f64> {
        match self {
            Distortion::Brown(b) => b.coefficients(),
            Distortion::Fisheye(f) => f.coefficients().to_vec(),
        }
    }

    /// Each coefficient with its name (`k1`, `p1`, ...), all of the model's, in OpenCV's order.
    pub fn named_coefficients(&self) -> Vec<(&'static str, f64)> {
        match *self {
            Distortion::Brown(b) => vec![
                ("k1", b.k1),
                ("k2", b.k2),
                ("p1", b.p1),
                ("p2", b.p2),
                ("k3", b.k3),
                ("k4", b.k4),
                ("k5", b.k5),
                ("k6", b.k6),
            ],
            Distortion::Fisheye(f) => vec![("k1", f.k1), ("k2", f.k2), ("k3", f.k3), ("k4", f.k4)],
        }
    }

    /// Applies the distortion to a normalised point.
    #[inline]
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        match self {
            Distortion::Brown(b) => b.distort(x, y),
            Distortion::Fisheye(f) => f.distort(x, y),
        }
    }

    /// Inverts [`Distortion::distort`]; `None` where the model is not invertible there
    /// (it folds back, or for a fisheye the ray is 90 degrees or more off axis).
    pub fn undistort(&self, xd: f64, yd: f64) -> Option<(f64, f64)> {
        match self {
            Distortion::Brown(b) => b.undistort(xd, yd),
            Distortion::Fisheye(f) => f.undistort(xd, yd),
        }
    }
}

/// The JSON form of [`Distortion`] (scene files): the coefficients by name, and `model` only for a fisheye,
/// so the scene files written before fisheye lenses existed read and write unchanged.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DistortionFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<LensModel>,
    #[serde(default)]
    k1: f64,
    #[serde(default)]
    k2: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p2: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    k3: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    k4: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    k5: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    k6: Option<f64>,
}

impl TryFrom<DistortionFields> for Distortion {
    type Error = String;

    fn try_from(f: DistortionFields) -> Result<Self, String> {
        let z = |v: Option<f64>| v.unwrap_or(0.0);
        match f.model.unwrap_or_default() {
            LensModel::Brown => Ok(Distortion::Brown(BrownConrady {
                k1: f.k1,
                k2: f.k2,
                p1: z(f.p1),
                p2: z(f.p2),
                k3: z(f.k3),
                k4: z(f.k4),
                k5: z(f.k5),
                k6: z(f.k6),
            })),
            LensModel::Fisheye => {
                let given = [("p1", f.p1), ("p2", f.p2), ("k5", f.k5), ("k6", f.k6)];
                let extra: Vec<&str> = given.iter().filter(|(_, v)| v.is_some()).map(|(n, _)| *n).collect();
                if !extra.is_empty() {
                    return Err(format!("the fisheye model has only k1..k4; remove {}", extra.join(", ")));
                }
                Ok(Distortion::fisheye(f.k1, f.k2, z(f.k3), z(f.k4)))
            }
        }
    }
}

impl From<Distortion> for DistortionFields {
    fn from(d: Distortion) -> Self {
        match d {
            Distortion::Brown(b) => {
                let rational = b.is_rational();
                let opt = |v: f64| rational.then_some(v);
                DistortionFields {
                    model: None,
                    k1: b.k1,
                    k2: b.k2,
                    p1: Some(b.p1),
                    p2: Some(b.p2),
                    k3: Some(b.k3),
                    k4: opt(b.k4),
                    k5: opt(b.k5),
                    k6: opt(b.k6),
                }
            }
            Distortion::Fisheye(f) => DistortionFields {
                model: Some(LensModel::Fisheye),
                k1: f.k1,
                k2: f.k2,
                p1: None,
                p2: None,
                k3: Some(f.k3),
                k4: Some(f.k4),
                k5: None,
                k6: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A strong fisheye of ~190 degrees' field (coefficients of the kind a Kannala-Brandt calibration of an
    /// equidistant lens gives: small corrections to `theta_d = theta`).
    pub(crate) const STRONG_FISHEYE: KannalaBrandt = KannalaBrandt { k1: -0.013, k2: -0.0084, k3: 0.0039, k4: -0.0008 };

    /// Whether `theta_d` rises over `[0, theta_max]`: a real lens's does (else two rays share one pixel).
    fn monotonic(k: &KannalaBrandt, theta_max: f64) -> bool {
        (0..=200).all(|i| k.theta_d(theta_max * i as f64 / 200.0).1 > 0.05)
    }

    #[test]
    fn scene_json_of_a_brown_lens_is_unchanged_and_a_fisheye_names_its_model() {
        let old = concat!(
            r#"{"k1":-0.11540543156195804,"k2":0.03726790327754411,"#,
            r#""p1":0.00012695879439968832,"p2":-0.0003560339571529907,"k3":0.0}"#
        );
        let d: Distortion = serde_json::from_str(old).unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), old, "the fixtures' scene files write back byte for byte");
        let f = Distortion::fisheye(0.1, -0.02, 0.003, -0.0004);
        let text = serde_json::to_string(&f).unwrap();
        assert!(text.starts_with(r#"{"model":"fisheye","k1":0.1"#), "{text}");
        // Written back, the JSON is the same text: serde_json's float_roundtrip makes that exact.
        assert_eq!(serde_json::to_string(&serde_json::from_str::<Distortion>(&text).unwrap()).unwrap(), text);
        let r = Distortion::Brown(BrownConrady { k4: 0.5, k5: 0.01, k6: 0.002, ..BrownConrady::default() });
        let rational = serde_json::to_string(&r).unwrap();
        assert!(rational.contains(r#""k6":0.002"#), "{rational}");
        assert_eq!(serde_json::to_string(&serde_json::from_str::<Distortion>(&rational).unwrap()).unwrap(), rational);
        let e = serde_json::from_str::<Distortion>(r#"{"model":"fisheye","k1":0.1,"p1":0.001}"#).unwrap_err().to_string();
        assert!(e.contains("p1"), "{e}");
        let e = serde_json::from_str::<Distortion>(r#"{"model":"fisheye","k7":0.1}"#).unwrap_err().to_string();
        assert!(e.contains("k7"), "{e}");
        assert_eq!(serde_json::from_str::<Distortion>(r#"{"model":"equidistant"}"#).unwrap().model(), LensModel::Fisheye);
    }

    #[test]
    fn a_fisheye_past_ninety_degrees_has_no_pinhole_point() {
        let k = STRONG_FISHEYE;
        let (theta_d_90, _) = k.theta_d(std::f64::consts::FRAC_PI_2);
        assert!(k.undistort(theta_d_90 * 1.01, 0.0).is_none());
        let (x, y) = k.undistort(0.0, k.theta_d(85f64.to_radians()).0).unwrap();
        // tan(85 deg) = 11.43; a 1e-9 relative tolerance is float noise of the Newton solution.
        assert!(x.abs() < 1e-12 && (y / 85f64.to_radians().tan() - 1.0).abs() < 1e-9, "{x} {y}");
    }

    proptest! {
        /// Distort then undistort returns the point, over the field a fisheye covers (up to 89 degrees off axis)
        /// for fisheye coefficients of real lenses; to 1e-9 in normalised units, relative to the point's radius
        /// (a ray at 89 degrees has `x/z` ~ 57, and 1e-9 of that is still ~1e-5 px at f = 300 px).
        #[test]
        fn fisheye_distort_then_undistort_is_identity(
            theta in 0.0f64..89.0, phi in 0.0f64..360.0,
            k1 in -0.1f64..0.1, k2 in -0.05f64..0.05, k3 in -0.01f64..0.01, k4 in -0.002f64..0.002,
        ) {
            for k in [STRONG_FISHEYE, KannalaBrandt { k1, k2, k3, k4 }] {
                prop_assume!(monotonic(&k, 89f64.to_radians()));
                let (t, p) = (theta.to_radians(), phi.to_radians());
                let (x, y) = (t.tan() * p.cos(), t.tan() * p.sin());
                let (xd, yd) = k.distort(x, y);
                let (xu, yu) = k.undistort(xd, yd).expect("a monotonic lens inverts inside 90 degrees");
                prop_assert!((xu - x).hypot(yu - y) <= 1e-9 * x.hypot(y).max(1.0), "{:?} -> {:?}", (x, y), (xu, yu));
            }
        }

        /// The rational Brown-Conrady model (8 coefficients, as OpenCV's CALIB_RATIONAL_MODEL fits them) inverts
        /// to 1e-12 over the normalised field of a wide lens (|x|, |y| < 0.9, ~84 degrees diagonal).
        #[test]
        fn rational_distort_then_undistort_is_identity(
            x in -0.9f64..0.9, y in -0.9f64..0.9,
            k1 in -0.3f64..0.3, k4 in 0.0f64..0.3, p1 in -0.002f64..0.002,
        ) {
            let b = BrownConrady { k1, k2: 0.02, p1, p2: -0.0005, k3: 0.001, k4, k5: 0.01, k6: 0.001 };
            let [[a, bb], [c, d]] = b.jacobian(x, y);
            // Keep to where the lens is one-to-one (the determinant stays well positive).
            prop_assume!(a * d - bb * c > 0.2);
            let (xd, yd) = b.distort(x, y);
            if let Some((xu, yu)) = b.undistort(xd, yd) {
                prop_assert!((xu - x).hypot(yu - y) < 1e-12, "{:?} -> {:?}", (x, y), (xu, yu));
            } else {
                prop_assert!(false, "no inverse at {:?}", (x, y));
            }
        }
    }
}
