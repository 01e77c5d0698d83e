"""The classifier and its training: a small CNN, trained deterministically on one thread."""

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from . import data


class DigitsCNN(nn.Module):
    """conv 3x3 (1 -> 16) -> ReLU -> conv 3x3 (16 -> 32) -> ReLU -> max pool 2x2 -> flatten -> linear 512 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.fc = nn.Linear(32 * 4 * 4, data.CLASSES)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), kernel_size=2, stride=2)
        return self.fc(torch.flatten(x, 1))


EPOCHS = 5
BATCH_SIZE = 32
LEARNING_RATE = 3e-3


def train(images, labels, epochs=EPOCHS, seed=0):
    """A DigitsCNN trained on `images` (float32 [N, 1, 8, 8]) and `labels` (integers [N]), in eval mode.

    The same arguments give the same weights: fixed seeds, one thread,
    deterministic algorithms only.
    """
    images = data.check_images(images, "training images")
    labels = data.check_labels(labels, len(images), "training labels")
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    model = DigitsCNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    x, y = torch.from_numpy(images), torch.from_numpy(labels)
    order_generator = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=order_generator)
        for batch in order.split(BATCH_SIZE):
            optimizer.zero_grad()
            F.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
    return model.eval()


def calibration_batches(images, batch_size=64):
    """The training images in batches of one image tensor each, as et_ops.export.quantize takes them."""
    images = data.check_images(images, "calibration images")
    return [(torch.from_numpy(np.ascontiguousarray(batch)),) for batch in np.array_split(
        images, max(1, -(-len(images) // batch_size)))]
