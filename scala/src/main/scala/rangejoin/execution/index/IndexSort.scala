package rangejoin.execution.index

/**
 * Stable sorts of row indices by their keys: a merge sort through [[KeyColumn.compare]] for any
 * key, and a radix sort for keys stored as longs. Sorting `Array[Int]` through java.util.Arrays
 * would box every index; both keep the indices primitive. Both are stable, so they give the same
 * order: ties keep their input order.
 */
private[execution] object IndexSort {

  private val InsertionSortBelow = 24

  def sort(indices: Array[Int], keys: KeyColumn): Unit =
    sort(indices, indices.clone(), 0, indices.length, keys)

  /**
   * Sorts `indices` by `values(index)`, signed, stably: a least-significant-byte-first radix sort
   * of (key, index) pairs, each pass a stable counting sort of one byte, so the result is the
   * merge sort's, index for index, in O(8n) with sequential memory access instead of ~log2(n)
   * comparisons per row through a column. A byte that every key shares is no pass at all (keys
   * in a narrow range sort in a few passes).
   * {{{
   *   keys (hex)      0x0102  0x0201  0x0101  0x0202      indices 0 1 2 3
   *   by byte 0:      0x0201  0x0101  0x0102  0x0202      1 2 0 3   (ties: input order)
   *   by byte 1:      0x0101  0x0102  0x0201  0x0202      2 0 1 3
   * }}}
   */
  def sortLongs(indices: Array[Int], values: Array[Long]): Unit =
    new LongSort(indices.length).sort(indices, indices.length, values)

  /**
   * [[sortLongs]] for `indices(0 until n)`, n up to `capacity`, with its buffers kept from one
   * sort to the next: for a caller that sorts many small batches (a shuffled join's streamed
   * chunks), where fresh buffers per batch would be most of the sort's allocation.
   */
  final class LongSort(capacity: Int) {
    private[this] var keys = new Array[Long](capacity)
    private[this] var spareKeys = new Array[Long](capacity)
    private[this] var spareOrder = new Array[Int](capacity)
    private[this] val counts = new Array[Int](8 * 256)

    def sort(indices: Array[Int], n: Int, values: Array[Long]): Unit = {
      if (n < 2) return
      java.util.Arrays.fill(counts, 0)
      var order = indices
      var i = 0
      while (i < n) {
        val k = values(indices(i)) ^ Long.MinValue // flipping the sign bit: unsigned byte order is signed order
        keys(i) = k
        var b = 0
        while (b < 8) {
          counts(b * 256 + ((k >>> (8 * b)) & 0xff).toInt) += 1
          b += 1
        }
        i += 1
      }
      var b = 0
      while (b < 8) {
        val shift = 8 * b
        val base = b * 256
        if (counts(base + ((keys(0) >>> shift) & 0xff).toInt) != n) { // else every key has this byte
          // Each byte's counts become the position its first key goes to.
          var sum = 0
          var d = 0
          while (d < 256) {
            val c = counts(base + d)
            counts(base + d) = sum
            sum += c
            d += 1
          }
          i = 0
          while (i < n) {
            val k = keys(i)
            val slot = base + ((k >>> shift) & 0xff).toInt
            val at = counts(slot)
            spareKeys(at) = k
            spareOrder(at) = order(i)
            counts(slot) = at + 1
            i += 1
          }
          val k = keys; keys = spareKeys; spareKeys = k
          val o = order; order = spareOrder; spareOrder = o
        }
        b += 1
      }
      if (order ne indices) { // the result is in a buffer of ours: back to the caller's array
        System.arraycopy(order, 0, indices, 0, n)
        spareOrder = order
      }
    }
  }

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

