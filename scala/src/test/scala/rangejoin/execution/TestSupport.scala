package rangejoin.execution

import scala.reflect.ClassTag

import org.apache.spark.SparkConf
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer, Serializer}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.DataType

import rangejoin.condition.RangeOp
/** Rows, comparisons and serialization shared by the execution suites; no SparkSession. */
object TestSupport {

  /** UnsafeRows of `values` (Spark's internal forms) typed `types`: what a broadcast holds. */
  def unsafeRows(types: Seq[DataType], values: Seq[Seq[Any]]): Seq[InternalRow] = {
    val toUnsafe = UnsafeProjection.create(types.toArray)
    values.map(v => toUnsafe(new GenericInternalRow(v.toArray)).copy())
  }

  /** Field `i` of `row` in Spark's internal form, NULL as null. */
  def valueAt(row: InternalRow, i: Int, dataType: DataType): Any =
    if (row.isNullAt(i)) null else row.get(i, dataType)

  /** Catalyst's own predicate `x op y`, the definition the join must agree with. */
  def comparison(op: RangeOp, x: Expression, y: Expression): Expression = op match {
    case RangeOp.Lt => LessThan(x, y)
    case RangeOp.Le => LessThanOrEqual(x, y)
    case RangeOp.Gt => GreaterThan(x, y)
    case RangeOp.Ge => GreaterThanOrEqual(x, y)
  }

  /**
   * Whether Spark evaluates `x op y` to true for values of `dataType` (NULL and false both mean
   * no), by evaluating the catalyst comparison interpreted.
   */
  def sparkHolds(op: RangeOp, dataType: DataType): (Any, Any) => Boolean = {
    val predicate =
      comparison(op, BoundReference(0, dataType, nullable = true), BoundReference(1, dataType, nullable = true))
    val row = new GenericInternalRow(2)
    (x, y) => {
      row.update(0, x)
      row.update(1, y)
      predicate.eval(row) == true
    }
  }

  private val sparkSerializers: Seq[(String, Serializer)] = Seq(
    "java" -> new JavaSerializer(new SparkConf(false)),
    "kryo" -> new KryoSerializer(new SparkConf(false)))

  /** `x`, and `x` after a round trip through each serializer Spark may be configured with. */
  def asShipped[T: ClassTag](x: T): Seq[(String, T)] =
    ("in memory" -> x) +: sparkSerializers.map { case (name, serializer) =>
      val instance = serializer.newInstance()
      name -> instance.deserialize[T](instance.serialize(x))
    }

  def javaRoundTrip[T <: java.io.Serializable](x: T): T = {
    val bytes = new java.io.ByteArrayOutputStream
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(x)
    out.close()
    new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray))
      .readObject().asInstanceOf[T]
  }
}
