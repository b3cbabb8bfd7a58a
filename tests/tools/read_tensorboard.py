"""Prints every scalar of a TensorBoard run folder as JSON, read by TensorBoard's own
EventAccumulator; exit code 3 (and a message) when the tensorboard package is missing."""
import json
import sys

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError as e:  # the test skips, saying so
    print(f"the tensorboard Python package is missing ({e}); pip install tensorboard", file=sys.stderr)
    sys.exit(3)

acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})  # 0: keep every event
acc.Reload()
out = {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
print(json.dumps(out))
