//! The stage's output: the located pose with the evidence for it ([`BoardPose`], each feature's fit, the construction fitted with it), a pose to check against a frame ([`GivenPose`]), and how well the board's edges fit a trial pose ([`EdgeFit`], for `setup`).

use super::*;

/// How a pose was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocateMethod {
    /// From the board's own edges.
    Automatic,
    /// From hand-picked point correspondences (`--points`).
    Points,
}

/// How well one model feature fits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureFit {
    pub feature: String,
    /// Samples of the feature inside the image.
    pub samples: usize,
    /// Of those, samples that found their image edge within the inlier distance.
    pub inliers: usize,
    /// RMS normal distance of the inliers, px.
    pub rms_px: f64,
    /// Whether the rules fix the feature ([`ModelEdge::fixed`]). Only those are
    /// fitted and decide the verdict; a construction feature (at its nominal size)
    /// is listed to show whether this table is built like that.
    pub fixed: bool,
}

/// The stage's output: the camera pose in the board frame and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoardPose {
    pub board: String,
    pub pose: CameraPose,
    pub method: LocateMethod,
    /// RMS reprojection error of the features used, px: normal distances of the
    /// edge samples (automatic) or point distances (points).
    pub reprojection_rms_px: f64,
    /// Fraction of the visible model's edge samples matched (automatic only).
    pub coverage: f64,
    /// Predicted standard error of the worst visible board point, mm (automatic
    /// only): the edge samples' errors clustered by edge, each edge's shared error
    /// at least a tenth of a pixel ([`uncertainty`]), so that it covers the real
    /// error, not only the edges' noise.
    pub position_sigma_mm: f64,
    pub features: Vec<FeatureFit>,
    /// The dimensions the maker chose, as fitted with the pose (mm by key, [`FittedConstruction`]); empty for a pose
    /// from points, or a board whose model has none.
    pub construction: FittedConstruction,
}

impl BoardPose {
    /// This pose as the start of a later frame's check ([`Locator::refine_from`]), its construction with it.
    pub fn given(&self) -> GivenPose {
        GivenPose { pose: self.pose, construction: self.construction.clone() }
    }

    /// Writes the pose ([`PoseFile::save`]) with its quality numbers and its construction.
    pub fn save(&self, path: &Path) -> Result<(), LocateError> {
        PoseFile { pose: self.pose, position_sigma_mm: Some(self.position_sigma_mm), construction: self.construction.clone() }.save(
            path,
            &[("reprojection_rms_px", self.reprojection_rms_px), ("coverage", self.coverage)],
        )?;
        Ok(())
    }
}

/// A pose to check against a frame and refine ([`Locator::refine_from`]): a pose file's, the last frame's, one
/// from typed points; with the board's construction measured with it, where known (empty: the board file's
/// nominal build).
#[derive(Debug, Clone, PartialEq)]
pub struct GivenPose {
    pub pose: CameraPose,
    pub construction: FittedConstruction,
}

impl GivenPose {
    /// A pose with no construction measured with it.
    pub fn new(pose: CameraPose) -> GivenPose {
        GivenPose { pose, construction: FittedConstruction::new() }
    }
}

impl From<PoseFile> for GivenPose {
    fn from(f: PoseFile) -> GivenPose {
        GivenPose { pose: f.pose, construction: f.construction }
    }
}

/// How well the board's edges fit an image at a refined pose ([`Locator::edge_fit`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeFit {
    pub pose: CameraPose,
    /// Model edge samples inside the image.
    pub samples: usize,
    /// Of those, samples within the inlier distance of their image edge.
    pub inliers: usize,
    /// Model edges with at least one inlier.
    pub edges: usize,
    /// Each sample's squared distance to its image edge, capped at the inlier
    /// distance's square (a missed sample costs the cap), summed, px^2.
    pub truncated_cost_px2: f64,
}

impl EdgeFit {
    /// The cost per sample, px^2.
    pub fn mean_cost_px2(&self) -> f64 {
        self.truncated_cost_px2 / self.samples.max(1) as f64
    }
}
