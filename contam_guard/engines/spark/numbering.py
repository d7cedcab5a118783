"""Record numbers for a DataFrame's rows: a column, or the row's position (as ``zipWithIndex``).

The position is computed without moving rows through Python: ``monotonically_increasing_id``
holds the partition in its upper bits and the row's place within the partition in its lower 33
bits; one small job counts each partition's rows, and each row's number is the count of the
partitions before it plus its place. Like ``RDD.zipWithIndex``, this numbers a DataFrame whose
partitions are read the same way each time (files, a cached DataFrame); for anything else, pass
a record column.
"""

from __future__ import annotations

from itertools import accumulate

from pyspark.sql import DataFrame
from pyspark.sql import functions as sf

RECORD = "__contam_guard_record"
_PARTITION = "__contam_guard_partition"
_PLACE = "__contam_guard_place"


def numbered(df: DataFrame, record_col: str | None) -> DataFrame:
    """``df`` with the record number in column ``RECORD`` (a long)."""
    if record_col is not None:
        return df.withColumn(RECORD, sf.col(record_col).cast("long"))
    partition = sf.spark_partition_id()
    tagged = df.withColumn(_PARTITION, partition).withColumn(
        _PLACE, sf.monotonically_increasing_id() - sf.shiftleft(partition.cast("long"), 33)
    )
    counts = {row[0]: row[1] for row in tagged.groupBy(_PARTITION).count().collect()}
    partitions = range(max(counts, default=-1) + 1)
    starts = [0, *accumulate(counts.get(p, 0) for p in partitions)]
    if not counts:
        return df.withColumn(RECORD, sf.lit(None).cast("long"))
    offsets = sf.create_map(*[sf.lit(x) for p in partitions for x in (p, starts[p])])
    record = (offsets[sf.col(_PARTITION)] + sf.col(_PLACE)).cast("long")
    return tagged.withColumn(RECORD, record).drop(_PARTITION, _PLACE)
