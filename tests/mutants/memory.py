"""Realistic mistakes in the memory exercises, one per function, each with the checks that must catch it.

``MUTANTS[name] = (replacement objects, checks that must fail)``: the other
student objects come from the reference solution.
"""

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint


def _counting(size_of, *, unpack=lambda t: t, dedupe=False):
    def saved_bytes(model, x):
        total, seen = 0, set()

        def pack(t):
            nonlocal total
            if not (dedupe and t.data_ptr() in seen):
                total += size_of(t)
            seen.add(t.data_ptr())
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = model(x)
        return out, total
    return saved_bytes


saved_elements = _counting(lambda t: t.numel())                                  # elements, not bytes
saved_four_bytes = _counting(lambda t: t.numel() * 4)                            # float32 assumed
saved_storage = _counting(lambda t: t.untyped_storage().nbytes())                # the storage, not the view
saved_once = _counting(lambda t: t.numel() * t.element_size(), dedupe=True)      # a tensor saved twice counted once
saved_unpack_none = _counting(lambda t: t.numel() * t.element_size(), unpack=lambda t: None)


def saved_outside_hooks(model, x):
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        pass
    return model(x), total        # the forward pass ran after the block: nothing counted


def forward_no_checkpoint(blocks, x):
    for block in blocks:
        x = block(x)
    return x


def forward_reentrant(blocks, x):
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=True)
    return x


def forward_first_block_only(blocks, x):
    x = checkpoint(blocks[0], x, use_reentrant=False)
    for block in list(blocks)[1:]:
        x = block(x)
    return x


def forward_every_layer(blocks, x):
    for block in blocks:
        for layer in block:
            x = checkpoint(layer, x, use_reentrant=False)   # keeps every layer's input: more than the plain run
    return x


def forward_no_rng_state(blocks, x):
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=False, preserve_rng_state=False)
    return x


def _profiled(step):
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    return prof.key_averages()


def top_op_by_total_time(step):
    return max(_profiled(step), key=lambda e: e.cpu_time_total).key


def top_op_most_called(step):
    return max(_profiled(step), key=lambda e: (e.count, e.self_cpu_time_total)).key


def top_op_row(step):
    return max(_profiled(step), key=lambda e: e.self_cpu_time_total)     # the event itself, not its .key


def top_op_without_warm_up(step):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()                   # the first call: one-time costs in the profile
    return max(prof.key_averages(), key=lambda e: e.self_cpu_time_total).key


def residual_add_in_place(x, w):
    h = torch.relu(x @ w)
    h += x                       # relu saved h: backward raises the version-counter error
    return h


def residual_relu_last(x, w):
    return torch.relu(x @ w + x)


def predict_detached(model, x):
    return model(x).detach()     # the graph was built and its activations kept during the call


def predict_eval_mode(model, x):
    model.eval()
    return model(x)


MUTANTS = {
    "saved_bytes counts elements, not bytes": ({"saved_bytes": saved_elements}, {"check_saved_bytes_count"}),
    "saved_bytes assumes 4 bytes per element": ({"saved_bytes": saved_four_bytes}, {"check_saved_bytes_count"}),
    "saved_bytes counts a view's whole storage": ({"saved_bytes": saved_storage}, {"check_saved_bytes_count"}),
    "saved_bytes counts a tensor saved twice once": ({"saved_bytes": saved_once}, {"check_saved_bytes_count"}),
    "saved_bytes runs the model after the hooks' block": ({"saved_bytes": saved_outside_hooks},
                                                          {"check_saved_bytes_count"}),
    "saved_bytes's unpack returns None": ({"saved_bytes": saved_unpack_none}, {"check_saved_bytes_backward"}),
    "checkpointed_forward does not checkpoint": ({"checkpointed_forward": forward_no_checkpoint},
                                                 {"check_checkpoint_trades_memory"}),
    "checkpointed_forward uses the reentrant checkpoint": ({"checkpointed_forward": forward_reentrant},
                                                           {"check_checkpoint_gradients",
                                                            "check_checkpoint_trades_memory"}),
    "checkpointed_forward checkpoints the first block only": ({"checkpointed_forward": forward_first_block_only},
                                                              {"check_checkpoint_trades_memory"}),
    "checkpointed_forward checkpoints every layer on its own": ({"checkpointed_forward": forward_every_layer},
                                                                {"check_checkpoint_trades_memory"}),
    "checkpointed_forward drops the RNG state (dropout differs)": ({"checkpointed_forward": forward_no_rng_state},
                                                                   {"check_checkpoint_gradients"}),
    "most_expensive_op sorts by total CPU time": ({"most_expensive_op": top_op_by_total_time}, {"check_top_op"}),
    "most_expensive_op returns the most called operator": ({"most_expensive_op": top_op_most_called},
                                                           {"check_top_op"}),
    "most_expensive_op returns the profile's row, not its name": ({"most_expensive_op": top_op_row},
                                                                  {"check_top_op"}),
    "most_expensive_op profiles the first call, without warm-up": ({"most_expensive_op": top_op_without_warm_up},
                                                                   {"check_top_op"}),
    "residual_relu adds x in place into relu's saved output": ({"residual_relu": residual_add_in_place},
                                                               {"check_residual_backward"}),
    "residual_relu applies relu after the residual": ({"residual_relu": residual_relu_last},
                                                      {"check_residual_values", "check_residual_backward"}),
    "predict detaches the result instead of no_grad": ({"predict": predict_detached}, {"check_predict_no_graph"}),
    "predict switches to eval mode instead of no_grad": ({"predict": predict_eval_mode}, {"check_predict_no_graph"}),
}

# What each mistake is, for the student: the grader says "This looks like: <description>" when a grade matches
# the mistake's signature (autograder/checks/memory/mistakes.py, written by tests/mistakes/signatures.py).
DESCRIPTIONS = {
    "saved_bytes counts elements, not bytes": "saved_bytes counts elements, not bytes.",
    "saved_bytes assumes 4 bytes per element": "saved_bytes assumes 4 bytes per element whatever the dtype.",
    "saved_bytes counts a view's whole storage": "saved_bytes counts the whole storage behind a view instead of the "
                                                 "saved tensor itself.",
    "saved_bytes counts a tensor saved twice once": "saved_bytes counts a tensor that autograd saves twice only "
                                                    "once.",
    "saved_bytes runs the model after the hooks' block": "saved_bytes runs the model after the hooks' `with` block "
                                                         "has ended, so nothing is counted.",
    "saved_bytes's unpack returns None": "saved_bytes's unpack hook returns None instead of the saved tensor, so "
                                         "backward fails.",
    "checkpointed_forward does not checkpoint": "checkpointed_forward runs the blocks without checkpointing them.",
    "checkpointed_forward uses the reentrant checkpoint": "checkpointed_forward uses the reentrant checkpoint "
                                                          "(`use_reentrant=True`).",
    "checkpointed_forward checkpoints the first block only": "checkpointed_forward checkpoints the first block "
                                                             "only.",
    "checkpointed_forward checkpoints every layer on its own": "checkpointed_forward checkpoints every layer on "
                                                               "its own, which keeps more than the plain run.",
    "checkpointed_forward drops the RNG state (dropout differs)": "checkpointed_forward does not preserve the RNG "
                                                                   "state, so dropout differs in the recomputation.",
    "most_expensive_op sorts by total CPU time": "most_expensive_op ranks operators by total CPU time (children "
                                                 "included), not by self time.",
    "most_expensive_op returns the most called operator": "most_expensive_op returns the most called operator, not "
                                                          "the most expensive one.",
    "most_expensive_op returns the profile's row, not its name": "most_expensive_op returns the profile's row (an "
                                                                 "event) instead of its name, the event's `key`.",
    "most_expensive_op profiles the first call, without warm-up": "most_expensive_op profiles the first call of "
                                                                   "the step, with no call to warm it up before.",
    "residual_relu adds x in place into relu's saved output": "residual_relu adds the residual in place into a "
                                                              "tensor that relu saved for backward.",
    "residual_relu applies relu after the residual": "residual_relu applies relu after adding the residual "
                                                     "instead of before.",
    "predict detaches the result instead of no_grad": "predict detaches the result instead of running without "
                                                      "grad, so the graph is still built during the call.",
    "predict switches to eval mode instead of no_grad": "predict switches the model to eval mode instead of "
                                                        "running without grad.",
}
