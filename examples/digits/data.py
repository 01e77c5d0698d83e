"""The digits: loading, the train/test split, and checks of images and labels.

Every array the demo reads or is given goes through check_images or
check_labels, so data of the wrong shape, dtype or range is a DigitsDataError
that says what was expected, not a failure deep inside numpy or PyTorch.
"""

from dataclasses import dataclass

import numpy as np

IMAGE_SHAPE = (1, 8, 8)  # channels, height, width: one image as the model takes it
CLASSES = 10
TEST_FRACTION = 0.2
SPLIT_SEED = 0


class DigitsDataError(ValueError):
    """Images or labels that are not what the demo expects."""


@dataclass(frozen=True)
class Split:
    train_images: np.ndarray  # float32 [N, 1, 8, 8], pixels in [0, 1]
    train_labels: np.ndarray  # int64 [N], 0 to 9
    test_images: np.ndarray
    test_labels: np.ndarray


def load_split():
    """The digits sklearn ships, split into a training and a held-out test set (the same split every time)."""
    from sklearn.datasets import load_digits  # reads the bundled digits.csv.gz: no download

    digits = load_digits()
    images = (digits.images[:, None] / 16.0).astype(np.float32)  # pixels are 0 to 16
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(SPLIT_SEED).permutation(len(labels))
    test, train = np.split(order, [round(len(labels) * TEST_FRACTION)])
    return Split(check_images(images[train], "training images"), check_labels(labels[train], len(train)),
                 check_images(images[test], "test images"), check_labels(labels[test], len(test)))


def _array(value, what):
    if not isinstance(value, np.ndarray):
        raise DigitsDataError(f"{what}: expected a numpy array, got {type(value).__name__}")
    return value


def check_images(images, what="images"):
    """`images` if it is a float32 array [N, 1, 8, 8] (N >= 1) of pixels in [0, 1]; else DigitsDataError."""
    images = _array(images, what)
    if images.dtype != np.float32:
        raise DigitsDataError(f"{what}: dtype {images.dtype}, expected float32 (pixels scaled to [0, 1])")
    if images.ndim != 4 or images.shape[1:] != IMAGE_SHAPE or images.shape[0] == 0:
        raise DigitsDataError(f"{what}: shape {list(images.shape)}, expected [N, {', '.join(map(str, IMAGE_SHAPE))}] "
                              "with N >= 1")
    if not np.all((images >= 0) & (images <= 1)):
        raise DigitsDataError(f"{what}: pixels must lie in [0, 1] (NaN or out of range found)")
    return images


def check_labels(labels, count, what="labels"):
    """`labels` as int64 if it is an integer array [count] of digits 0 to 9; else DigitsDataError."""
    labels = _array(labels, what)
    if labels.dtype.kind not in "iu":
        raise DigitsDataError(f"{what}: dtype {labels.dtype}, expected integers (the digits 0 to {CLASSES - 1})")
    if labels.shape != (count,):
        raise DigitsDataError(f"{what}: shape {list(labels.shape)}, expected [{count}] (one label per image)")
    if labels.size and (labels.min() < 0 or labels.max() >= CLASSES):
        raise DigitsDataError(f"{what}: values from {labels.min()} to {labels.max()}, expected 0 to {CLASSES - 1}")
    return labels.astype(np.int64)


def labels_from_scores(scores, count, what="scores"):
    """The predicted digit of each image from a model's outputs: float [count, 10], or [count, 1, 10] as the
    program's per-image output [1, 10] stacked by `et-ops run --batch`."""
    scores = _array(scores, what)
    if scores.dtype.kind != "f":
        raise DigitsDataError(f"{what}: dtype {scores.dtype}, expected floating point scores")
    if scores.ndim == 3 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.shape != (count, CLASSES):
        raise DigitsDataError(f"{what}: shape {list(scores.shape)}, expected [{count}, {CLASSES}] or "
                              f"[{count}, 1, {CLASSES}] (ten scores per image)")
    return scores.argmax(axis=1).astype(np.int64)


def load_array(path, what):
    """The array in the .npy file `path`; DigitsDataError naming the file when it is not one."""
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise DigitsDataError(f"{what}: {path}: not a readable .npy file ({e})") from None
