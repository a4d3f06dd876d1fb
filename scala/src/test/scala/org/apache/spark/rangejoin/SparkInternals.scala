package org.apache.spark.rangejoin

import org.apache.spark.SparkContext

/** Test access to Spark internals that are private to the `org.apache.spark` package. */
object SparkInternals {

  /**
   * Waits until the listener bus has delivered every event posted so far, query execution
   * listener calls included (they are delivered from the bus, after the query returns).
   */
  def waitForListenerBus(sc: SparkContext): Unit = sc.listenerBus.waitUntilEmpty()
}
