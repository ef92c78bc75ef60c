#!/usr/bin/env python3
"""Trains the hole-state classifier (models/hole_state.onnx) from a training set
written by `boardcall fixtures training-set` (patches.npy + labels.csv).

Model: scikit-learn's MLPClassifier, one hidden layer, six independent sigmoid
outputs (src/model.rs OUTPUTS): red_leaner, blue_leaner, red_flat_1, red_flat_2,
blue_flat_1, blue_flat_2 ("_1": at least one flat washer of that team in the cup,
"_2": at least two). Exported with skl2onnx; only the probabilities output is
kept, so the ONNX graph is MatMul/Add/Relu/Sigmoid, which tract runs.

The split is by scene (no scene has patches on both sides). The training half
is augmented with the patch's eight flips and quarter turns: a hole looks the
same from any side, the cameras' directions are random.

Not part of CI. Needs: pip install scikit-learn skl2onnx onnx numpy
(onnxruntime, if installed, is used to check the export against scikit-learn).
See models/README.md for the exact commands that made the committed model.
"""

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupShuffleSplit
from sklearn.neural_network import MLPClassifier

# Must match src/model.rs.
SIDE, LEVELS, CHANNELS = 32, 2, 3
FEATURES = LEVELS * SIDE * SIDE * CHANNELS
OUTPUTS = ["red_leaner", "blue_leaner", "red_flat_1", "red_flat_2", "blue_flat_1", "blue_flat_2"]


def load_sets(data_dirs):
    """Several training sets as one: their patches in the order given, each set's scene numbers after the last's (a
    scene stays on one side of the split)."""
    parts = [load(d) for d in data_dirs]
    offsets = np.cumsum([0] + [int(p[2].max()) + 1 for p in parts[:-1]])
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] + o for p, o in zip(parts, offsets)]),
        np.concatenate([p[3] for p in parts]),
    )


def load(data_dir: Path):
    x = np.load(data_dir / "patches.npy")
    assert x.shape[1] == FEATURES, f"patches have {x.shape[1]} features, src/model.rs says {FEATURES}"
    with open(data_dir / "labels.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == x.shape[0], "labels.csv and patches.npy disagree"
    n = lambda r, k: int(r[k])
    y = np.array(
        [
            [
                n(r, "red_leaners") > 0,
                n(r, "blue_leaners") > 0,
                n(r, "red_flat") >= 1,
                n(r, "red_flat") >= 2,
                n(r, "blue_flat") >= 1,
                n(r, "blue_flat") >= 2,
            ]
            for r in rows
        ],
        dtype=np.int64,
    )
    groups = np.array([int(r["scene"]) for r in rows])
    # Sets written before the recipe column are all of the fixture generator's recipe.
    recipes = np.array([r.get("recipe", "fixtures") for r in rows])
    return x, y, groups, recipes


def dihedral(x):
    """The eight flips and quarter turns of each patch (rows are board y, columns x)."""
    p = x.reshape(-1, LEVELS, SIDE, SIDE, CHANNELS)
    out = []
    for k in range(4):
        r = np.rot90(p, k, axes=(2, 3))
        out.append(r)
        out.append(r[:, :, :, ::-1, :])
    return np.concatenate([o.reshape(-1, FEATURES) for o in out])


def calibration(y, p, bins=10):
    """How far the outputs' probabilities are from how often they are right: the expected calibration error over
    all six outputs (|mean p - share positive| per bin of p, weighed by the bin's share), and the share of outputs
    at least 0.9 sure ("p >= 0.9 or p <= 0.1", how the run time acts on them) that are wrong."""
    pf, yf = p.ravel(), y.ravel()
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(pf, edges[1:-1]), 0, bins - 1)
    ece = 0.0
    for b in range(bins):
        m = which == b
        if m.any():
            ece += m.mean() * abs(pf[m].mean() - yf[m].mean())
    sure = (pf >= 0.9) | (pf <= 0.1)
    sure_wrong = float(((pf >= 0.5).astype(np.int64) != yf)[sure].mean()) if sure.any() else None
    return {"ece": float(ece), "sure_share": float(sure.mean()), "sure_wrong": sure_wrong}


def report(name, y, p):
    """Per-output accuracy and, for the leaner outputs, precision and recall; the probabilities' calibration."""
    pred = (p >= 0.5).astype(np.int64)
    lines = {}
    for i, o in enumerate(OUTPUTS):
        pos = y[:, i] == 1
        tp = int(((pred[:, i] == 1) & pos).sum())
        fp = int(((pred[:, i] == 1) & ~pos).sum())
        fn = int(((pred[:, i] == 0) & pos).sum())
        lines[o] = {
            "accuracy": float((pred[:, i] == y[:, i]).mean()),
            "positives": int(pos.sum()),
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
        }
    exact = float((pred == y).all(axis=1).mean())
    sure = (np.abs(p - 0.5) >= 0.4).all(axis=1)
    sure_right = float((pred[sure] == y[sure]).all(axis=1).mean()) if sure.any() else None
    print(f"{name}: {len(y)} holes, whole hole state right {100 * exact:.1f} %; "
          f"{100 * sure.mean():.1f} % of holes with every output >= 0.9 sure, of those right {sure_right and 100 * sure_right:.1f} %")
    for o, v in lines.items():
        pr = "-" if v["precision"] is None else f"{v['precision']:.3f}"
        rc = "-" if v["recall"] is None else f"{v['recall']:.3f}"
        print(f"  {o:<12} acc {v['accuracy']:.3f}  positives {v['positives']:>4}  precision {pr}  recall {rc}")
    cal = calibration(y, p)
    sw = "-" if cal["sure_wrong"] is None else f"{100 * cal['sure_wrong']:.2f} %"
    print(f"  calibration: expected error {cal['ece']:.4f}; {100 * cal['sure_share']:.1f} % of outputs >= 0.9 sure, of those wrong {sw}")
    return {"holes": int(len(y)), "exact": exact, "confident_fraction": float(sure.mean()), "confident_right": sure_right, "outputs": lines, "calibration": cal}


def export(clf, path: Path, check_x):
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import FloatTensorType
    import onnx

    onx = convert_sklearn(
        clf,
        initial_types=[("patch", FloatTensorType([None, FEATURES]))],
        options={id(clf): {"zipmap": False}},
        target_opset={"": 13, "ai.onnx.ml": 1},
    )
    # Keep only the probabilities: the label output needs nothing tract lacks,
    # but the run time reads probabilities and a smaller graph is clearer.
    prob = [o.name for o in onx.graph.output if o.name != "label"]
    onx = onnx.utils.Extractor(onx).extract_model(["patch"], prob)
    onx.doc_string = "boardcall hole-state classifier: see models/README.md"
    # skl2onnx names the graph with a random id: a fixed name makes the same training give the same bytes.
    onx.graph.name = "boardcall_hole_state"
    onnx.checker.check_model(onx)
    path.write_bytes(onx.SerializeToString())
    ops = sorted({n.op_type for n in onx.graph.node})
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB), ops: {', '.join(ops)}")
    try:
        import onnxruntime as rt
    except ImportError:
        return
    sess = rt.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"patch": check_x.astype(np.float32)})[-1]
    want = clf.predict_proba(check_x)
    print(f"onnxruntime vs scikit-learn: max |dp| = {np.abs(got - want).max():.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, nargs="+", help="folders with patches.npy and labels.csv (several: trained on all)")
    ap.add_argument("-o", "--output", type=Path, default=Path(__file__).with_name("hole_state.onnx"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--alpha", type=float, default=1e-3, help="L2 penalty")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--test-fraction", type=float, default=0.2)
    ap.add_argument("--metrics", type=Path, help="also write the held-out metrics here (JSON)")
    ap.add_argument("--baseline", type=Path, help="also report this ONNX model (e.g. the committed one) on the same held-out "
                    "patches, for comparison (needs onnxruntime)")
    args = ap.parse_args()

    x, y, groups, recipes = load_sets(args.data)
    print(f"{len(x)} hole patches from {len(set(groups))} scenes; positives per output: "
          + ", ".join(f"{o} {int(c)}" for o, c in zip(OUTPUTS, y.sum(axis=0))))
    split = GroupShuffleSplit(n_splits=1, test_size=args.test_fraction, random_state=args.seed)
    train, test = next(split.split(x, y, groups))
    xa = dihedral(x[train])
    ya = np.tile(y[train], (8, 1))
    print(f"train: {len(train)} patches ({len(xa)} with flips and turns), held out: {len(test)} patches "
          f"from {len(set(groups[test]))} scenes")
    clf = MLPClassifier(
        hidden_layer_sizes=(args.hidden,),
        alpha=args.alpha,
        batch_size=256,
        learning_rate_init=1e-3,
        max_iter=args.epochs,
        random_state=args.seed,
        verbose=False,
    )
    clf.fit(xa, ya)
    metrics = {
        "train": report("train", y[train], clf.predict_proba(x[train])),
        "held_out": report("held out", y[test], clf.predict_proba(x[test])),
        "held_out_by_recipe": {
            r: report(f"held out, {r} recipe", y[test][recipes[test] == r], clf.predict_proba(x[test][recipes[test] == r]))
            for r in sorted(set(recipes[test]))
        },
        "patches": int(len(x)),
        "scenes": int(len(set(groups))),
        "seed": args.seed,
        "hidden": args.hidden,
    }
    if args.baseline:
        import onnxruntime as rt
        sess = rt.InferenceSession(str(args.baseline), providers=["CPUExecutionProvider"])
        base = lambda xs: sess.run(None, {"patch": xs.astype(np.float32)})[-1]
        metrics["baseline"] = {
            "model": str(args.baseline),
            "held_out": report(f"baseline {args.baseline.name}, held out", y[test], base(x[test])),
            "held_out_by_recipe": {
                r: report(f"baseline {args.baseline.name}, held out, {r} recipe", y[test][recipes[test] == r], base(x[test][recipes[test] == r]))
                for r in sorted(set(recipes[test]))
            },
        }
    export(clf, args.output, x[test][:64])
    if args.metrics:
        args.metrics.write_text(json.dumps(metrics, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
