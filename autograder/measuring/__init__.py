"""What checks measure with: comparison of values, gradients, the ops a function runs, speed, and the oracles'
recorded outputs."""
