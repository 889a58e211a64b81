"""The PyTorch models of issue 16, at test sizes (benchmarks use larger ones).

Each `make_*` returns `(model, inputs, labels)` with seeded parameters and
synthetic data, the model in eval mode where it has batch norm.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, sizes=(32, 64, 10)):
        super().__init__()
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x)


class LeNet5(nn.Module):
    """LeNet-5 on 1x28x28 inputs: two conv/relu/max-pool stages, three linear layers."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                                nn.Linear(84, 10))

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x)


class SmallCNN(nn.Module):
    """conv-bn-relu-maxpool, conv(stride 2)-bn-relu, average pooling, dropout, linear."""

    def __init__(self, channels=3, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(channels, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AvgPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.5),
        )
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.features(x))


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 conv-bn stages and the identity (or a
    strided 1x1 conv-bn projection) added before the last relu."""

    def __init__(self, c_in, c_out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.skip = nn.Identity() if stride == 1 and c_in == c_out else nn.Sequential(
            nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


class ResNetSmall(nn.Module):
    """A CIFAR-style ResNet: a 3x3 stem, one basic block per width in `widths`
    (each after the first halving the resolution), average pooling, a linear head."""

    def __init__(self, widths=(32, 64), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU())
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks.append(BasicBlock(c, w, 1 if i == 0 else 2))
            c = w
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        return self.head(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1))


class EncoderBlock(nn.Module):
    """Pre-norm transformer encoder block: multi-head self-attention (written out,
    or `F.scaled_dot_product_attention`), layer norm, GELU MLP, residuals, and a
    classifier on the mean over the sequence."""

    def __init__(self, width=32, heads=4, hidden=64, classes=10, fused=False, approximate="none"):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.GELU(approximate), nn.Linear(hidden, width))
        self.head = nn.Linear(width, classes)

    def attention(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            y = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, s, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return self.head(x.mean(dim=1))


def _data(shape, classes=10, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g), torch.randint(0, classes, (shape[0],), generator=g)


def make_mlp(batch=16):
    torch.manual_seed(0)
    return MLP(), *_data((batch, 32))


def make_lenet(batch=4):
    torch.manual_seed(0)
    return LeNet5(), *_data((batch, 1, 28, 28))


def make_cnn(batch=4):
    torch.manual_seed(0)
    model = SmallCNN()
    with torch.no_grad():  # non-trivial running statistics
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return model.eval(), *_data((batch, 3, 16, 16))


def make_encoder(batch=2, seq=8, fused=False, approximate="none"):
    torch.manual_seed(0)
    return EncoderBlock(fused=fused, approximate=approximate), *_data((batch, seq, 32))


MODELS = {"mlp": make_mlp, "lenet": make_lenet, "cnn": make_cnn, "encoder": make_encoder}
