"""An eighth, blind set of mistakes for measuring the named-mistake hint, on all ten assignments (docs/feedback.md,
"How often the hint is right").

``MISTAKES = {topic: {what it is: (replacement objects, truth)}}``, 50 mistakes (5 for each of basics, modules,
broadcasting, operators, vectorization, dataloading, stability, amp, memory and distributed), in the format of
``second_set.py``: ``truth`` is the id of the mutant (``tests/mutants/<topic>.py``) that is the same mistake, or
``None`` when no mutant is (then the right hint names nothing). 25 have a mutant's truth, 25 have ``None``.

How it was made (2026-11-28): each mistake was written from the notebooks' own text (``source/<topic>/<topic>.ipynb``
and ``release/``: their markdown, contracts and exercise stubs) as a student reading it might write it, in the
student's own code: a mutant's mistake written another way, or a mistake the lessons invite that no mutant makes
(an upcast never cast back, ``log`` for ``log1p``, a ``get_worker_info()`` that is ``None`` without workers, an
``all_reduce`` of a temporary, the loss's minus sign dropped, ...). Every truth was written down from the mutants'
``DESCRIPTIONS`` dicts only, before anything of this set was graded. Its writer read no signature
(``autograder/checks/*/mistakes.py``), no feedback code (``autograder/feedback*.py``), no mutant's code and no other
set's mistakes (only the format of the seventh and second sets), and graded nothing: each replacement was only
imported and run on small inputs of the writer's own, to check that it runs and differs from a correct answer.
Nobody had graded it when it was committed.
"""

import math
import os
import tarfile
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset, DistributedSampler, IterableDataset, get_worker_info

# ------------------------------------------------------------------------------------------------ basics


def grad_of_on_x_itself(f, x):
    x.requires_grad = True                       # switched on for the caller's tensor, never switched back
    (g,) = torch.autograd.grad(f(x), x)
    return g


def grad_of_in_float32(f, x):
    leaf = x.detach().float().requires_grad_(True)     # a float64 x comes back float32
    return torch.autograd.grad(f(leaf), leaf)[0]


def to_numpy_squeezed(t):
    return t.detach().cpu().numpy().squeeze()    # drops every size-1 dimension


def fit_quadratic_one_draw(generate_data, steps=1000, lr=0.1):
    x, y = generate_data()                       # drawn once, before the loop
    features = torch.stack([x ** 2, x, torch.ones_like(x)], dim=1)
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        loss = ((features @ w - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return w.detach()


def fit_quadratic_no_zero_grad(generate_data, steps=1000, lr=0.1):
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        x, y = generate_data()
        features = torch.stack([x * x, x, torch.ones_like(x)], dim=-1)
        loss = F.mse_loss(features @ w, y)
        loss.backward()                          # no zero_grad: every step's gradient adds to the last ones
        optimizer.step()
    return w.detach()


# ------------------------------------------------------------------------------------------------ modules


class AffineScalars(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.tensor(1.0))   # 0-d, not [1]
        self.b = nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        return self.a * x + self.b


def fit_squeezing_last_dim(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        prediction = model(x).squeeze(-1)        # [N, 1] -> [N], against a target of [N, 1]
        loss = F.mse_loss(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def fit_with_weight_decay(model, x, y, steps=500, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, weight_decay=1e-2)   # "a little regularisation"
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


class NormalizerUnbiasedBoth(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps)
        mean, var = x.mean(dim=0), x.var(dim=0)  # torch's default: unbiased, used to normalise too
        with torch.no_grad():
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var
        return (x - mean) / torch.sqrt(var + self.eps)


class NormalizerVarStartsAtZero(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum, self.eps = momentum, eps
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.zeros(num_features))   # the contract says ones

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            var = ((x - mean) ** 2).mean(0)
            n = x.shape[0]
            with torch.no_grad():
                self.running_mean.copy_((1 - self.momentum) * self.running_mean + self.momentum * mean)
                self.running_var.copy_((1 - self.momentum) * self.running_var + self.momentum * var * n / (n - 1))
            return (x - mean) / (var + self.eps).sqrt()
        return (x - self.running_mean) / (self.running_var + self.eps).sqrt()


# ------------------------------------------------------------------------------------------------ broadcasting


class MergeReluByDefault(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = nn.Linear(in_features1, out_features)
        self.linear2 = nn.Linear(in_features2, out_features)
        self.activation = activation or torch.relu       # None falls back to relu

    def forward(self, a, b):
        return self.activation(self.linear1(a) + self.linear2(b))


class MergeActivatingEachBranch(nn.Module):
    def __init__(self, in_features1, in_features2, out_features, activation=None):
        super().__init__()
        self.linear1 = nn.Linear(in_features1, out_features)
        self.linear2 = nn.Linear(in_features2, out_features)
        self.activation = activation

    def forward(self, a, b):
        left, right = self.linear1(a), self.linear2(b)
        if self.activation is not None:                  # activation(l1) + activation(l2), not of the sum
            left, right = self.activation(left), self.activation(right)
        return left + right


def distances_expanded_unclamped(x, y):
    return (x ** 2).sum(1)[:, None] - 2 * x @ y.T + (y ** 2).sum(1)[None, :]


def strict_mse_raising_type_error(prediction, target):
    if prediction.shape != target.shape:
        raise TypeError(f"prediction has shape {list(prediction.shape)} but target has shape {list(target.shape)}")
    return ((prediction - target) ** 2).mean()


def strict_mse_mean_over_last_dim(prediction, target):
    if prediction.shape != target.shape:
        raise ValueError(f"prediction has shape {list(prediction.shape)} but target has shape {list(target.shape)}")
    return ((prediction - target) ** 2).mean(dim=-1)     # "an explicit dim": [4, 1] gives [4], not a 0-d loss


# ------------------------------------------------------------------------------------------------ operators


def masked_mean_not_below_not_above(x, low, high):
    inside = ~(x < low) & ~(x > high)            # true for NaN too
    total = torch.where(inside, x, torch.zeros_like(x)).sum(0)
    return total / inside.sum(0).clamp(min=1)


def masked_mean_where_then_mean(x, low, high):
    return torch.where((x >= low) & (x <= high), x, 0.0).mean(dim=0)


def masked_mean_nan_to_num(x, low, high):
    inside = (x >= low) & (x <= high)
    total = torch.where(inside, x, 0.0).sum(dim=0)
    return torch.nan_to_num(total / inside.sum(dim=0))   # 0/0 -> 0, but also inf -> the largest finite value


def row_sum_reshaped_2d(x):
    return x.reshape(x.shape[0], -1).sum(dim=0)


def row_sum_same_dtype(x):
    return x.sum(dim=0, dtype=x.dtype)           # int32 stays int32, bool stays bool


# ------------------------------------------------------------------------------------------------ vectorization


def batch_gather_no_range_check(tensor, indices):
    B, N = tensor.shape[:2]
    if indices.shape[0] != B:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {B}")
    offsets = (torch.arange(B, device=tensor.device) * N).view(B, *([1] * (indices.dim() - 1)))
    return tensor.reshape(B * N, *tensor.shape[2:])[indices + offsets]


def batch_gather_offsets_for_2d(tensor, indices):
    B, N = tensor.shape[:2]
    if indices.shape[0] != B:
        raise ValueError(f"indices has batch size {indices.shape[0]} but tensor has batch size {B}")
    if indices.numel() and (indices.min() < 0 or indices.max() >= N):
        raise IndexError(f"indices must be in [0, {N})")
    offsets = torch.arange(B, device=tensor.device)[:, None] * N     # [B, 1]: right for [B, K] indices only
    return tensor.flatten(0, 1)[indices + offsets]


def per_sample_grads_model_weights(model, params, x, y):
    weights = {name: p.detach() for name, p in model.named_parameters()}   # the model's, not the given params

    def loss_of(w, xi, yi):
        return F.cross_entropy(functional_call(model, w, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    return vmap(grad(loss_of), in_dims=(None, 0, 0))(weights, x, y)


def masked_batch_mean_by_lengths(x, lengths):
    keep = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
    total = torch.where(keep.unsqueeze(-1), x, torch.zeros_like(x)).sum(dim=1)
    return total / lengths[:, None].to(x.dtype)          # a row of length 0: 0 / 0


def masked_batch_mean_mask_unpaired(x, lengths):
    mask = (torch.arange(x.shape[1], device=x.device) < lengths).unsqueeze(-1)   # [T] against [B]
    total = torch.where(mask, x, torch.zeros_like(x)).sum(1)
    return total / lengths.clamp(min=1).unsqueeze(1).to(x.dtype)


# ------------------------------------------------------------------------------------------------ dataloading

_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


class ImageDirectoryDatasetInGlobOrder(Dataset):
    def __init__(self, root, pattern="*.png"):
        self.files = [p for p in Path(root).glob(pattern) if p.is_file()]   # not sorted

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        image = cv2.imread(str(self.files[index]), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"cannot decode {self.files[index]}")
        return image


def write_shards_ceil_chunks(image_paths, out_dir, num_shards):
    paths = [str(p) for p in image_paths]
    if num_shards < 1 or num_shards > len(paths):
        raise ValueError(f"num_shards must be between 1 and {len(paths)}, got {num_shards}")
    os.makedirs(out_dir, exist_ok=True)
    per_shard = math.ceil(len(paths) / num_shards)       # 10 in 4: 3, 3, 3, 1
    out = []
    for index in range(num_shards):
        shard = os.path.join(out_dir, f"shard-{index:05d}.tar")
        with tarfile.open(shard, "w") as tar:
            for path in paths[index * per_shard:(index + 1) * per_shard]:
                tar.add(path, arcname=os.path.basename(path))
        out.append(shard)
    return out


def _decoded(path, tar, member):
    image = cv2.imdecode(np.frombuffer(tar.extractfile(member).read(), np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"{path}: cannot decode member {member.name}")
    return image


class TarImageDatasetWorkersOnly(IterableDataset):
    def __init__(self, paths, rank=0, world_size=1):
        self.paths = [str(p) for p in paths]
        self.rank, self.world_size = rank, world_size    # kept, never used

    def __iter__(self):
        for path in self.paths:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        count = 0
        for path in self.paths:
            with tarfile.open(path, "r|") as tar:
                for member in tar:
                    tar.members = []
                    if not member.isfile() or not member.name.lower().endswith(_IMAGE_SUFFIXES):
                        continue
                    if count % workers == worker:
                        yield member.name, _decoded(path, tar, member)
                    count += 1


class TarImageDatasetAssumingWorkers(IterableDataset):
    def __init__(self, paths, rank=0, world_size=1):
        self.paths = [str(p) for p in paths]
        self.rank, self.world_size = rank, world_size

    def __iter__(self):
        for path in self.paths:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
        info = get_worker_info()                          # None with num_workers=0: AttributeError below
        readers = self.world_size * info.num_workers
        reader = self.rank * info.num_workers + info.id
        count = 0
        for path in self.paths:
            with tarfile.open(path, "r|") as tar:
                for member in tar:
                    tar.members = []
                    if not member.isfile() or not member.name.lower().endswith(_IMAGE_SUFFIXES):
                        continue
                    if count % readers == reader:
                        yield member.name, _decoded(path, tar, member)
                    count += 1


def collate_images_as_rgb(batch):
    names = [name for name, _ in batch]
    images = [torch.as_tensor(np.asarray(image)).flip(-1) for _, image in batch]   # BGR -> RGB "for the model"
    sizes = torch.tensor([list(image.shape[:2]) for image in images], dtype=torch.int64)
    out = torch.zeros(len(images), 3, int(sizes[:, 0].max()), int(sizes[:, 1].max()), dtype=torch.uint8)
    for i, image in enumerate(images):
        out[i, :, :image.shape[0], :image.shape[1]] = image.permute(2, 0, 1)
    return names, out, sizes


# ------------------------------------------------------------------------------------------------ stability


def softmax_max_put_back_last(logits, dim=-1):
    peak = logits.amax(dim=dim)
    exp = torch.exp(logits - peak.unsqueeze(-1))
    return exp / exp.sum(dim=dim).unsqueeze(-1)


def cross_entropy_log_of_probs(labels, logits, dim=-1):
    exp = (logits - logits.amax(dim=dim, keepdim=True)).exp()
    probs = exp / exp.sum(dim=dim, keepdim=True)
    return -(labels * probs.log()).sum(dim=dim)


def cross_entropy_without_minus(labels, logits, dim=-1):
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    log_probs = shifted - shifted.exp().sum(dim=dim, keepdim=True).log()
    return (labels * log_probs).sum(dim=dim)


class SoftplusInFloat32(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x = x.float()                            # "more accurate", never cast back to the input's dtype
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def softplus_in_float32(x):
    return SoftplusInFloat32.apply(x)


class SoftplusWithLog(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.relu(x) + torch.log(1 + torch.exp(-torch.abs(x)))   # log(1 + tiny) rounds to 0

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def softplus_with_log(x):
    return SoftplusWithLog.apply(x)


# ------------------------------------------------------------------------------------------------ amp


def _scaler_for(device_type, dtype, scaler):
    if scaler is None:
        scaler = torch.amp.GradScaler(device_type, enabled=dtype == torch.float16)
    return scaler


def train_amp_clip_then_step(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                             accumulate=1, max_grad_norm=None, scaler=None):
    scaler = _scaler_for(device_type, dtype, scaler)
    losses = []
    for i, (inputs, targets) in enumerate(batches):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.detach())
        if (i + 1) % accumulate == 0:
            if max_grad_norm is not None:        # clipped while still multiplied by the scale
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return torch.stack(losses).tolist() if losses else []


def train_amp_full_loss_each_micro_batch(model, batches, optimizer, loss_fn, *, device_type="cuda",
                                         dtype=torch.float16, accumulate=1, max_grad_norm=None, scaler=None):
    scaler = _scaler_for(device_type, dtype, scaler)
    losses = []
    for i, (inputs, targets) in enumerate(batches):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss).backward()            # not divided by accumulate
        losses.append(loss.detach())
        if (i + 1) % accumulate == 0:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return torch.stack(losses).tolist() if losses else []


def train_amp_zero_grad_first(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                              accumulate=1, max_grad_norm=None, scaler=None):
    scaler = _scaler_for(device_type, dtype, scaler)
    losses = []
    for i, (inputs, targets) in enumerate(batches):
        optimizer.zero_grad()                    # as in every training loop, but here on every micro-batch
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.detach())
        if (i + 1) % accumulate == 0:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
    return torch.stack(losses).tolist() if losses else []


def train_amp_step_counted_from_zero(model, batches, optimizer, loss_fn, *, device_type="cuda",
                                     dtype=torch.float16, accumulate=1, max_grad_norm=None, scaler=None):
    scaler = _scaler_for(device_type, dtype, scaler)
    losses = []
    optimizer.zero_grad()
    for i, (inputs, targets) in enumerate(batches):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.detach())
        if i % accumulate == 0:                  # steps after batch 0, then every accumulate: off by one
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return torch.stack(losses).tolist() if losses else []


def train_amp_clipping_values(model, batches, optimizer, loss_fn, *, device_type="cuda", dtype=torch.float16,
                              accumulate=1, max_grad_norm=None, scaler=None):
    scaler = _scaler_for(device_type, dtype, scaler)
    losses = []
    optimizer.zero_grad()
    for i, (inputs, targets) in enumerate(batches, start=1):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(inputs), targets)
        scaler.scale(loss / accumulate).backward()
        losses.append(loss.detach())
        if i % accumulate == 0:
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)   # each value, not the norm
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return torch.stack(losses).tolist() if losses else []


# ------------------------------------------------------------------------------------------------ memory


def saved_bytes_without_parameter_storage(model, x):
    parameter_storages = {p.untyped_storage().data_ptr() for p in model.parameters()}
    total = 0

    def pack(t):
        nonlocal total
        if t.untyped_storage().data_ptr() not in parameter_storages:   # "parameters cost no new memory"
            total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    return out, total


def checkpointed_forward_from_x_each_time(blocks, x):
    out = x
    for block in blocks:
        out = checkpoint(block, x, use_reentrant=False)   # x, not the previous block's output
    return out


def most_expensive_op_by_cpu_time_total(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    rows = sorted(prof.key_averages(), key=lambda event: event.cpu_time_total, reverse=True)
    return rows[0].key


def residual_relu_added_into_x(x, w):
    out = x                                      # an alias, not a copy
    out += torch.relu(x @ w)
    return out


def predict_detached(model, x):
    return model(x).detach()


# ------------------------------------------------------------------------------------------------ distributed


def _loader(dataset, world_size, rank, batch_size, seed):
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    return sampler, DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def train_ddp_forward_through_model(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
    ddp = DistributedDataParallel(model)
    sampler, loader = _loader(dataset, world_size, rank, batch_size, seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)       # the wrapped ddp is never called
            loss.backward()
            optimizer.step()
    return ddp.module


def train_ddp_zero_grad_before_step(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
    ddp = DistributedDataParallel(model)
    sampler, loader = _loader(dataset, world_size, rank, batch_size, seed)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            F.mse_loss(ddp(x), y).backward()
            optimizer.zero_grad()                # clears the gradients backward just made
            optimizer.step()
    return model


def train_accumulate_step_every_micro_batch(rank, world_size, model, dataset, *, batch_size, accumulation, epochs,
                                            lr, seed):
    ddp = DistributedDataParallel(model)
    sampler, loader = _loader(dataset, world_size, rank, batch_size, seed)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        optimizer.zero_grad()
        for i, (x, y) in enumerate(loader):
            if (i + 1) % accumulation != 0:
                with ddp.no_sync():
                    (F.mse_loss(ddp(x), y) / accumulation).backward()
            else:
                (F.mse_loss(ddp(x), y) / accumulation).backward()
            optimizer.step()                     # one level too far out: a step on every micro-batch
            optimizer.zero_grad()
    return model


def average_gradients_sum_op(model):
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)   # summed; never divided by the world size


def average_gradients_of_a_temporary(model):
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad / world_size)  # reduces a new tensor; p.grad keeps the local gradient


MISTAKES = {
    "basics": {
        "grad_of setting x.requires_grad = True on the caller's tensor": (
            {"grad_of": grad_of_on_x_itself}, "grad_of leaving requires_grad set on x"),
        "grad_of on a float32 copy of x": ({"grad_of": grad_of_in_float32}, None),
        "to_numpy squeezing size-1 dimensions": ({"to_numpy": to_numpy_squeezed}, None),
        "fit_quadratic drawing generate_data() once before the loop": (
            {"fit_quadratic": fit_quadratic_one_draw}, "fit_quadratic on one sample"),
        "fit_quadratic without zero_grad": ({"fit_quadratic": fit_quadratic_no_zero_grad}, None),
    },
    "modules": {
        "Affine with 0-d parameters": ({"Affine": AffineScalars}, "Affine with scalar parameters"),
        "fit squeezing the prediction's last dim": (
            {"fit": fit_squeezing_last_dim}, "fit with a squeezed prediction"),
        "fit with SGD weight_decay": ({"fit": fit_with_weight_decay}, None),
        "Normalizer normalising and updating with x.var() (unbiased)": (
            {"Normalizer": NormalizerUnbiasedBoth}, "Normalizer normalising with the unbiased variance"),
        "Normalizer with running_var starting at zeros": ({"Normalizer": NormalizerVarStartsAtZero}, None),
    },
    "broadcasting": {
        "Merge with activation or torch.relu": ({"Merge": MergeReluByDefault}, "Merge with ReLU when activation is None"),
        "Merge applying the activation to each branch before adding": (
            {"Merge": MergeActivatingEachBranch}, None),
        "distances by the expanded square, no clamp": (
            {"pairwise_sq_distances": distances_expanded_unclamped},
            "distances from the expanded square without clamping"),
        "strict_mse_loss raising TypeError": ({"strict_mse_loss": strict_mse_raising_type_error}, None),
        "strict_mse_loss averaging over the last dim only": ({"strict_mse_loss": strict_mse_mean_over_last_dim}, None),
    },
    "operators": {
        "masked_mean as not below and not above": (
            {"masked_mean": masked_mean_not_below_not_above}, "masked_mean counting NaN"),
        "masked_mean as torch.where(...).mean(0)": (
            {"masked_mean": masked_mean_where_then_mean}, "masked_mean dividing by N"),
        "masked_mean fixing 0/0 with nan_to_num": ({"masked_mean": masked_mean_nan_to_num}, None),
        "row_sum reshaping to [N, -1]": ({"row_sum": row_sum_reshaped_2d}, "row_sum for matrices only"),
        "row_sum with dtype=x.dtype": ({"row_sum": row_sum_same_dtype}, None),
    },
    "vectorization": {
        "batch_gather with the batch check but no range check": (
            {"batch_gather": batch_gather_no_range_check}, "batch_gather without a bounds check"),
        "batch_gather with offsets shaped [B, 1]": ({"batch_gather": batch_gather_offsets_for_2d}, None),
        "per_sample_grads of the model's detached named_parameters": (
            {"per_sample_grads": per_sample_grads_model_weights},
            "per_sample_grads of model.named_parameters() (not params, not detached)"),
        "masked_batch_mean dividing by lengths unclamped": (
            {"masked_batch_mean": masked_batch_mean_by_lengths}, "masked_batch_mean dividing 0 by 0 for empty rows"),
        "masked_batch_mean comparing arange(T) with lengths unpaired": (
            {"masked_batch_mean": masked_batch_mean_mask_unpaired}, None),
    },
    "dataloading": {
        "ImageDirectoryDataset in glob order": (
            {"ImageDirectoryDataset": ImageDirectoryDatasetInGlobOrder}, "folder: unsorted paths"),
        "write_shards in chunks of ceil(n / num_shards)": (
            {"write_shards": write_shards_ceil_chunks}, "shards: ceil-sized chunks"),
        "TarImageDataset split among workers only": ({"TarImageDataset": TarImageDatasetWorkersOnly}, "ignores rank"),
        "TarImageDataset reading get_worker_info() without a None check": (
            {"TarImageDataset": TarImageDatasetAssumingWorkers}, None),
        "collate_images flipping BGR to RGB": ({"collate_images": collate_images_as_rgb}, None),
    },
    "stability": {
        "stable_softmax with amax(dim) put back with unsqueeze(-1)": (
            {"stable_softmax": softmax_max_put_back_last}, "softmax forgetting keepdim"),
        "cross-entropy as the log of shifted probabilities": (
            {"softmax_cross_entropy": cross_entropy_log_of_probs}, "cross-entropy as log(softmax(x))"),
        "cross-entropy without the minus sign": ({"softmax_cross_entropy": cross_entropy_without_minus}, None),
        "Softplus computed in float32, never cast back": (
            {"Softplus": SoftplusInFloat32, "softplus": softplus_in_float32}, None),
        "Softplus with log(1 + exp(-|x|)) instead of log1p": (
            {"Softplus": SoftplusWithLog, "softplus": softplus_with_log}, None),
    },
    "amp": {
        "train_amp clipping without unscale_": ({"train_amp": train_amp_clip_then_step}, "clipping before unscale_"),
        "train_amp scaling the full loss of each micro-batch": (
            {"train_amp": train_amp_full_loss_each_micro_batch}, "loss not divided by accumulate"),
        "train_amp with zero_grad at the top of every iteration": (
            {"train_amp": train_amp_zero_grad_first}, "gradients cleared before every micro-batch"),
        "train_amp stepping when i % accumulate == 0 from i = 0": (
            {"train_amp": train_amp_step_counted_from_zero}, None),
        "train_amp clipping with clip_grad_value_": ({"train_amp": train_amp_clipping_values}, None),
    },
    "memory": {
        "saved_bytes leaving out tensors on a parameter's storage": (
            {"saved_bytes": saved_bytes_without_parameter_storage}, None),
        "checkpointed_forward checkpointing every block on x": (
            {"checkpointed_forward": checkpointed_forward_from_x_each_time}, None),
        "most_expensive_op sorted by cpu_time_total": (
            {"most_expensive_op": most_expensive_op_by_cpu_time_total}, "most_expensive_op sorts by total CPU time"),
        "residual_relu adding into an alias of x": ({"residual_relu": residual_relu_added_into_x}, None),
        "predict returning model(x).detach()": (
            {"predict": predict_detached}, "predict detaches the result instead of no_grad"),
    },
    "distributed": {
        "train_ddp building DDP but calling model(x)": (
            {"train_ddp": train_ddp_forward_through_model}, "train_ddp wraps the model but calls model(x), not ddp(x)"),
        "train_ddp calling zero_grad between backward and step": (
            {"train_ddp": train_ddp_zero_grad_before_step}, None),
        "train_accumulate stepping after every micro-batch": (
            {"train_accumulate": train_accumulate_step_every_micro_batch}, None),
        "average_gradients with ReduceOp.SUM and no division": (
            {"average_gradients": average_gradients_sum_op}, "average_gradients sums the gradients without dividing"),
        "average_gradients all-reducing p.grad / world_size": (
            {"average_gradients": average_gradients_of_a_temporary}, None),
    },
}
