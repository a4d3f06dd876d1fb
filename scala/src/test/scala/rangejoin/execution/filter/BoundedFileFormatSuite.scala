package rangejoin.execution.filter

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.TestShims

/** Which Parquet files the dynamic filter's bound may go to: those storing the read columns as the table's types. */
class BoundedFileFormatSuite extends AnyFunSuite {

  private def file(fields: (String, Option[DataType])*): Seq[(String, Option[DataType])] = fields
  private val table = StructType(Seq(StructField("id", LongType), StructField("k", DecimalType(12, 2))))
  import BoundedParquetFormat.storesAs

  test("a file storing every read column as the table's type takes the bound") {
    assert(storesAs(file("id" -> Some(LongType), "k" -> Some(DecimalType(12, 2)), "x" -> None), table, caseSensitive = true))
  }

  test("another precision, another integer width or another type does not") {
    for (k <- Seq(DecimalType(5, 2), DecimalType(12, 3), DoubleType, LongType, StringType)) {
      assert(!storesAs(file("id" -> Some(LongType), "k" -> Some(k)), table, caseSensitive = true), k)
    }
    assert(!storesAs(file("id" -> Some(IntegerType), "k" -> Some(DecimalType(12, 2))), table, caseSensitive = true))
  }

  test("a column Spark cannot read from the file does not, one the scan does not read does") {
    assert(!storesAs(file("id" -> None, "k" -> Some(DecimalType(12, 2))), table, caseSensitive = true))
    assert(storesAs(file("id" -> Some(LongType), "k" -> Some(DecimalType(12, 2)), "c" -> Some(StringType)),
      table, caseSensitive = true))
  }

  test("missing columns, top-level or nested, read as NULL and do not stop it") {
    assert(storesAs(file("id" -> Some(LongType)), table, caseSensitive = true))
    val nested = StructType(Seq(StructField("s", StructType(Seq(StructField("a", IntegerType), StructField("b", LongType))))))
    assert(storesAs(file("s" -> Some(StructType(Seq(StructField("a", IntegerType))))), nested, caseSensitive = true))
    assert(!storesAs(file("s" -> Some(StructType(Seq(StructField("a", LongType))))), nested, caseSensitive = true))
    val arrays = StructType(Seq(StructField("xs", ArrayType(DecimalType(12, 2)))))
    assert(!storesAs(file("xs" -> Some(ArrayType(DecimalType(5, 2)))), arrays, caseSensitive = true))
  }

  test("names match as the session matches them; a name two fields match is not the column's") {
    val upper = file("ID" -> Some(LongType), "K" -> Some(DecimalType(5, 2)))
    assert(storesAs(upper, table, caseSensitive = true)) // no such columns: NULL
    assert(!storesAs(upper, table, caseSensitive = false))
    val twice = file("k" -> Some(DecimalType(12, 2)), "K" -> Some(DecimalType(12, 2)))
    assert(!storesAs(twice, table, caseSensitive = false))
    assert(storesAs(twice, table, caseSensitive = true))
  }

  test("a collation is no other storage") {
    assume(TestShims.hasCollations, "Spark 3.5 has no collations")
    val collated = StructType(Seq(StructField("s", TestShims.collated("UTF8_LCASE"))))
    assert(storesAs(file("s" -> Some(StringType)), collated, caseSensitive = false))
  }
}
