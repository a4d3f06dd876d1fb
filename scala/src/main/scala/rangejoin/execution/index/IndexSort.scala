package rangejoin.execution.index

/**
 * A stable merge sort of row indices by their keys. Sorting `Array[Int]` through
 * java.util.Arrays would box every index; this keeps the indices primitive.
 */
private[execution] object IndexSort {

  private val InsertionSortBelow = 24

  def sort(indices: Array[Int], keys: KeyColumn): Unit =
    sort(indices, indices.clone(), 0, indices.length, keys)

  /**
   * Sorts each segment [starts(g), starts(g + 1)) of `indices` on its own: grouped rows sort in
   * O(n log(group size)), and tiny groups by insertion alone.
   */
  def sortSegments(indices: Array[Int], starts: Array[Int], keys: KeyColumn): Unit = {
    val tmp = new Array[Int](indices.length)
    var g = 0
    while (g + 1 < starts.length) {
      sort(indices, tmp, starts(g), starts(g + 1), keys)
      g += 1
    }
  }

  // Sorts a[lo, hi), using tmp[lo, hi) as scratch space.
  private def sort(a: Array[Int], tmp: Array[Int], lo: Int, hi: Int, keys: KeyColumn): Unit = {
    if (hi - lo < InsertionSortBelow) {
      var i = lo + 1
      while (i < hi) {
        val x = a(i)
        var j = i - 1
        while (j >= lo && keys.compare(a(j), x) > 0) {
          a(j + 1) = a(j)
          j -= 1
        }
        a(j + 1) = x
        i += 1
      }
      return
    }
    val mid = (lo + hi) >>> 1
    sort(a, tmp, lo, mid, keys)
    sort(a, tmp, mid, hi, keys)
    if (keys.compare(a(mid - 1), a(mid)) <= 0) return // already in order: common for sorted input
    System.arraycopy(a, lo, tmp, lo, hi - lo)
    var i = lo
    var j = mid
    var k = lo
    while (k < hi) {
      if (j >= hi || (i < mid && keys.compare(tmp(i), tmp(j)) <= 0)) {
        a(k) = tmp(i)
        i += 1
      } else {
        a(k) = tmp(j)
        j += 1
      }
      k += 1
    }
  }
}
