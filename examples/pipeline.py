"""A small sensor-data pipeline built from gpuprims reductions and scans.

A synthetic recording (rows are sensors, columns are time samples) goes
through the steps of a typical preprocessing job:

1. per-sensor statistics (mean, min, max) with ``axis=1``;
2. running totals with a row-wise ``prefix_sum``, and a moving average
   computed from them;
3. min-max normalisation of every sensor to [0, 1];
4. compaction of each sensor's spike events into one flat array: the number of
   events per sensor is a variable record length, and an exclusive scan of the
   lengths gives each record's offset in the flat array (the CSR layout).

Every result is checked against NumPy.  Runs on the CPU or a GPU::

    python examples/pipeline.py                 # GPU when usable, else CPU
    python examples/pipeline.py --device cpu --sensors 16 --samples 100000
"""

import argparse

import numpy as np

import gpuprims


def synthetic_recording(rng, sensors, samples):
    """Return a float32 (sensors, samples) matrix: offset + sine + noise + rare spikes."""
    t = np.linspace(0.0, 20.0 * np.pi, samples, dtype=np.float32)
    offsets = rng.uniform(-5.0, 5.0, size=(sensors, 1)).astype(np.float32)
    phases = rng.uniform(0.0, 2.0 * np.pi, size=(sensors, 1)).astype(np.float32)
    noise = rng.normal(0.0, 0.1, size=(sensors, samples)).astype(np.float32)
    spikes = (rng.random((sensors, samples)) < 0.001) * np.float32(4.0)
    return offsets + np.sin(t + phases) + noise + spikes


def positive_int(text):
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None,
                        help='"cpu", "cuda" or "cuda:N" (default: GPU when usable, else CPU)')
    parser.add_argument("--sensors", type=positive_int, default=64, help="number of sensors (rows)")
    parser.add_argument("--samples", type=positive_int, default=10_000, help="samples per sensor")
    parser.add_argument("--window", type=positive_int, default=50,
                        help="moving-average window, in samples (at most --samples)")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    args = parser.parse_args(argv)
    if args.window > args.samples:
        parser.error(f"--window {args.window} is longer than the recording (--samples {args.samples})")
    if args.device is not None:
        try:
            gpuprims.sum(np.zeros(1), device=args.device)
        except (TypeError, ValueError) as error:  # DeviceUnavailableError is a ValueError
            parser.error(f"--device {args.device}: {error}")
    device = args.device

    print(f"gpuprims device: {device or 'default'} (CUDA available: {gpuprims.cuda_available()})")
    readings = synthetic_recording(np.random.default_rng(args.seed), args.sensors, args.samples)
    print(f"recording: {readings.shape[0]} sensors x {readings.shape[1]} samples, {readings.dtype}")

    # 1. Per-sensor statistics.
    mean = gpuprims.mean(readings, axis=1, device=device)
    low = gpuprims.min(readings, axis=1, device=device)
    high = gpuprims.max(readings, axis=1, device=device)
    np.testing.assert_allclose(mean, readings.mean(axis=1, dtype=np.float64), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(low, readings.min(axis=1))
    np.testing.assert_array_equal(high, readings.max(axis=1))

    # 2. Running totals, and a moving average as a difference of running totals.
    totals = gpuprims.prefix_sum(readings, axis=1, device=device)
    # float32 rounding grows with the magnitude of the partial sums, so the
    # tolerance scales with each row's sum of absolute values.
    error = np.abs(totals - np.cumsum(readings, axis=1, dtype=np.float64))
    assert np.all(error <= 1e-4 * np.abs(readings).sum(axis=1, keepdims=True))
    w = args.window
    # The mean of samples i .. i+w-1 for each i: a difference of totals, with a 0 before the first.
    totals_from_zero = np.pad(totals, ((0, 0), (1, 0)))
    moving = (totals_from_zero[:, w:] - totals_from_zero[:, :-w]) / np.float32(w)
    print(f"moving average (window {w}) of sensor 0, first values: {np.round(moving[0, :4], 3)}")

    # 3. Min-max normalisation; keepdims keeps the (sensors, 1) shape for broadcasting.
    low_col = gpuprims.min(readings, axis=1, keepdims=True, device=device)
    span = gpuprims.max(readings, axis=1, keepdims=True, device=device) - low_col
    normalised = (readings - low_col) / span
    np.testing.assert_array_equal(
        normalised,
        (readings - readings.min(axis=1, keepdims=True)) / np.ptp(readings, axis=1, keepdims=True),
    )

    # 4. Compact spike events (readings above mean + 2) into one flat array.
    is_spike = readings > (mean + 2.0)[:, None]
    lengths = gpuprims.sum(is_spike, axis=1, device=device)          # events per sensor
    starts = gpuprims.prefix_sum(lengths, exclusive=True, device=device)  # record offsets
    n_events = int(gpuprims.sum(lengths, device=device))
    events = np.empty(n_events, dtype=np.int64)   # sample index of every spike
    for sensor, start in enumerate(starts):
        events[start:start + lengths[sensor]] = np.flatnonzero(is_spike[sensor])
    np.testing.assert_array_equal(lengths, is_spike.sum(axis=1))
    np.testing.assert_array_equal(starts, np.concatenate([[0], np.cumsum(lengths)[:-1]]))
    np.testing.assert_array_equal(events, np.nonzero(is_spike)[1])

    print("\nsensor      mean       min       max   spikes  offset")
    for sensor in range(min(5, args.sensors)):
        print(f"{sensor:6d} {mean[sensor]:9.3f} {low[sensor]:9.3f} {high[sensor]:9.3f} "
              f"{lengths[sensor]:8d} {starts[sensor]:7d}")
    print(f"\n{n_events} spike events packed into one array; all results match NumPy.")


if __name__ == "__main__":
    main()
