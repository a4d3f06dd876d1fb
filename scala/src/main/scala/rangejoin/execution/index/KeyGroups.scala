package rangejoin.execution.index

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * The per-key index's segments: under equality keys the buffer's keyed rows are grouped by their
 * equality key, and sorted by the range key within each group, so every search runs in one
 * segment, found by one hash lookup of the streamed row's equality key.
 * {{{
 *   equality key   chr1            chr2        chr3
 *   range key      2  5  5  9      1  4        7  8  8
 *   positions      0  1  2  3      4  5        6  7  8
 *   starts         0               4           6          9
 * }}}
 * Keys compare as BroadcastHashJoin's do: as UnsafeRows, byte for byte (Spark's optimizer has
 * already normalized floating-point keys, and rewritten collated strings to their collation
 * keys), and a key with a NULL field matches nothing (`<=>` keys reach the join NULL-free).
 *
 * @param keys   each group's key, by group number
 * @param starts group g holds positions [starts(g), starts(g + 1)); one more entry than groups
 */
private[rangejoin] final class KeyGroups(keys: BroadcastRows, val starts: Array[Int]) extends Serializable {
  require(starts.length == keys.rows.length + 1)

  def numGroups: Int = keys.rows.length

  /** Built once per JVM that reads the broadcast. */
  @transient private lazy val lookup: java.util.HashMap[UnsafeRow, Integer] = {
    val map = new java.util.HashMap[UnsafeRow, Integer](math.max(16, numGroups * 2))
    var g = 0
    while (g < numGroups) {
      map.put(keys.rows(g).asInstanceOf[UnsafeRow], g)
      g += 1
    }
    map
  }

  /** The group of `key` (an UnsafeRow of the equality keys), or -1 when no keyed row has it. */
  def group(key: UnsafeRow): Int =
    if (key.anyNull()) -1
    else {
      val g = lookup.get(key)
      if (g == null) -1 else g.intValue()
    }

  def from(group: Int): Int = starts(group)

  def until(group: Int): Int = starts(group + 1)
}
