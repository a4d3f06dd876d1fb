package org.apache.spark.sql.rangejoin

import org.apache.spark.sql.{Column, DataFrame}

import _root_.rangejoin.TestShims.ClassicDataset

/**
 * The DataFrame as-of join as PySpark's `_joinAsOf` calls it (Spark keeps it to its own package):
 * with an `on` condition, or with none (PySpark's `on=[]`: Spark's using-columns form, no keys).
 */
object AsOfJoins {
  def joinAsOf(
      left: DataFrame,
      right: DataFrame,
      leftAsOf: Column,
      rightAsOf: Column,
      on: Option[Column],
      how: String,
      tolerance: Column,
      allowExactMatches: Boolean,
      direction: String): DataFrame = {
    val (l, r) = (left.asInstanceOf[ClassicDataset[_]], right.asInstanceOf[ClassicDataset[_]])
    on match {
      case Some(condition) =>
        l.joinAsOf(r, leftAsOf, rightAsOf, condition, how, tolerance, allowExactMatches, direction)
      case None =>
        l.joinAsOf(r, leftAsOf, rightAsOf, Seq.empty[String], how, tolerance, allowExactMatches, direction)
    }
  }
}
