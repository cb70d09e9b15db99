"""The demo's plausible buggy student for `distributed`: a training loop that never calls `set_epoch` (every epoch
repeats the first one's order), and gradients all-reduced but never divided by the world size (the sum, not the
average).

``CELLS`` maps a solution cell's grade_id to what this student typed there; other
solution cells hold the reference answer.
"""

# the items these mistakes lose on the CPU, whatever the hidden seed (tests/course/test_grading.py)
LOSES = ('average_calls', 'average_matches_single', 'ddp_data_split', 'ddp_matches_single')

CELLS = {
    "train_ddp": '''import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler


def train_ddp(rank, world_size, model, dataset, *, batch_size, epochs, lr, seed):
    """Data-parallel SGD on the mean squared error: DDP, a DistributedSampler, set_epoch every epoch."""
    ddp = DistributedDataParallel(model)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=lr)
    for epoch in range(epochs):
        for x, y in loader:             # the sampler shuffles... the same way every epoch
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(ddp(x), y).backward()
            optimizer.step()
    return model
''',
    "average_gradients": '''def average_gradients(model):
    """All-reduce every parameter's gradient and divide it by the world size, on every rank."""
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)     # summed over the ranks; the division is missing
''',
}
