package rangejoin

/** `Option.when`, which Scala 2.12 (Spark 3.5) lacks. */
object OptionWhen {
  def apply[A](cond: Boolean)(a: => A): Option[A] = if (cond) Some(a) else None
}
