"""What building the interval index's tree costs, per build, in a JVM that builds it once per
query as a join does: 60,000 second keys in 30,000 key groups of two (W10's tiny groups), built
again and again through py4j. The numbers behind docs/design.md's "Equality keys plus a range":
with the tree's loops in its constructor, HotSpot never compiled them (`-XX:+PrintCompilation`
prints "COMPILE SKIPPED: stack not empty at OSR entry point" for `IntervalTree::<init>`), and
every build ran interpreted. Each time includes one py4j call.

    .venv/bin/python -m bench.probes.interval_tree_build [--builds 100] [--print-compilation]
"""

import argparse
import random
import statistics
import struct
import time

from pyspark.sql import SparkSession

import rangejoin

ROWS = 60_000
GROUP = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--builds", type=int, default=100)
    parser.add_argument("--print-compilation", action="store_true",
                        help="let the JVM print what it compiles (and skips) to stdout")
    args = parser.parse_args()
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    if args.print_compilation:
        builder = builder.config("spark.driver.extraJavaOptions", "-XX:+PrintCompilation")
    spark = rangejoin.configure(builder).getOrCreate()
    try:
        gateway = spark.sparkContext._gateway
        jvm = spark._jvm
        rnd = random.Random(7)
        # Arrays cross py4j in bulk, as big-endian bytes read into the JVM's arrays.
        second_keys = gateway.new_array(gateway.jvm.long, ROWS)
        jvm.java.nio.ByteBuffer.wrap(bytearray(struct.pack(
            f">{ROWS}q", *(rnd.randrange(10 ** 9) for _ in range(ROWS))))).asLongBuffer().get(second_keys)
        starts = gateway.new_array(gateway.jvm.int, ROWS // GROUP)
        jvm.java.nio.ByteBuffer.wrap(bytearray(struct.pack(
            f">{ROWS // GROUP}i", *range(0, ROWS, GROUP)))).asIntBuffer().get(starts)
        tree = jvm.rangejoin.execution.index.IntervalTree
        times = []
        for _ in range(args.builds):
            start = time.perf_counter()
            tree(second_keys, starts)
            times.append((time.perf_counter() - start) * 1000)
        half = times[len(times) // 2:]
        print(f"IntervalTree over {ROWS:,} rows in {ROWS // GROUP:,} groups: first 5 builds "
              f"{', '.join(f'{t:.2f}' for t in times[:5])} ms; median of the last {len(half)} "
              f"{statistics.median(half):.2f} ms")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
