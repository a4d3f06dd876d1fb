package org.apache.spark.sql.rangejoin

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.classic.{Dataset => ClassicDataset}

/** The DataFrame as-of join as PySpark's `_joinAsOf` calls it (Spark keeps it to its own package). */
object AsOfJoins {
  def joinAsOf(
      left: DataFrame,
      right: DataFrame,
      leftAsOf: Column,
      rightAsOf: Column,
      on: Column,
      how: String,
      tolerance: Column,
      allowExactMatches: Boolean,
      direction: String): DataFrame =
    left.asInstanceOf[ClassicDataset[_]].joinAsOf(right.asInstanceOf[ClassicDataset[_]], leftAsOf, rightAsOf, on,
      how, tolerance, allowExactMatches, direction)
}

/** With `on` as column names (none: no keys), as PySpark's `_joinAsOf(on=[...])`. */
object AsOfJoinsUsing {
  def joinAsOf(
      left: DataFrame,
      right: DataFrame,
      leftAsOf: Column,
      rightAsOf: Column,
      on: Seq[String],
      how: String,
      tolerance: Column,
      allowExactMatches: Boolean,
      direction: String): DataFrame =
    left.asInstanceOf[ClassicDataset[_]].joinAsOf(right.asInstanceOf[ClassicDataset[_]], leftAsOf, rightAsOf, on,
      how, tolerance, allowExactMatches, direction)
}
