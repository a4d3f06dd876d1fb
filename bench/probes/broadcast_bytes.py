"""The bytes each engine's broadcast of the same buffered side travels as: its value serialized
with the session's serializer, then compressed with the session's codec (LZ4 by default), as
Spark writes a broadcast's pieces. rangejoin's sorted broadcast (a SortedBuffer) beside stock
Spark's (BroadcastNestedLoopJoin's array of rows, or a HashedRelation), for the sides
bench.memory measures, built through the plans' own broadcast nodes (bench.memory.hold). Reads
the benchmark's scale-1 data (run `make bench`, or `python -m bench.bench --only
W1,W3,W6,W10`, first).

    .venv/bin/python -m bench.probes.broadcast_bytes
"""

from bench import memory
from bench import workloads as wl
from bench.local_spark import SPARK_CONF, local_spark

import rangejoin


def serialized_bytes(spark, value) -> tuple:
    """``value``'s size serialized, and serialized then compressed, in bytes."""
    jvm = spark._jvm
    conf = spark.sparkContext._jsc.sc().getConf()
    serializer, tag = memory.session_serializer(spark)
    plain = serializer.serialize(value, tag).remaining()
    sink = jvm.java.io.ByteArrayOutputStream()
    stream = serializer.serializeStream(jvm.org.apache.spark.io.CompressionCodec.createCodec(conf)
                                        .compressedOutputStream(sink))
    stream.writeObject(value, tag)
    stream.close()
    return plain, sink.size()


def main() -> None:
    data = wl.full_size_data()
    with local_spark("broadcast-bytes", conf=SPARK_CONF) as spark:
        memory.register_tables(spark, data)
        for key, value in memory.PROBE_CONF.items():
            spark.conf.set(key, value)
        for side in memory.SIDES:
            sql = next(q.sql for w in wl.workloads() for q in w.queries if q.key == side.query)
            for engine, (enabled, node_class) in memory.ENGINES.items():
                spark.conf.set(rangejoin.ENABLED, enabled)
                try:
                    held = memory.hold(spark, sql, node_class, side.table)
                except memory.OtherSide as e:
                    print(f"{side.table:<8} {engine:<12} not measured: {e}")
                    continue
                plain, compressed = serialized_bytes(spark, held["value"])
                print(f"{side.table:<8} {engine:<12} {held['payload']:<22} serialized {plain / 1e6:8.2f} MB, "
                      f"compressed {compressed / 1e6:8.2f} MB")
                held["broadcast"].destroy(True)


if __name__ == "__main__":
    main()
