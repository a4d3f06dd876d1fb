// rangejoin: fast range (inequality) joins for Apache Spark.
//
// One source tree, a jar per Spark line (project/SparkLines.scala): `-Drangejoin.spark=3.5` (or
// RANGEJOIN_SPARK=3.5) builds rangejoin-spark-3.5_2.12; with neither, the line is 4.3. A line is
// compiled against, and tested with, the jars that its pyspark wheel ships (pyspark/jars): for
// 4.3 the Makefile installs pyspark==4.3.0 into .venv, for the others `build/pyspark-home`
// installs it under ~/.cache/rangejoin/pyspark/. Spark is never packaged: the pom lists it as
// `provided` by whatever Spark the user runs.

val sparkLine = SparkLines.current
val sparkVersion = sparkLine.sparkVersion
// The newest Spark test-jars (QueryTest, SharedSparkSession, Spark's own join suites) that
// Maven Central has for the line; they run against the line's runtime above.
val sparkTestJarsVersion = sparkLine.testJars

/** The test tier (RANGEJOIN_TESTS; rangejoin.differential.Tier): full unless named. */
val testTier: String = sys.env.getOrElse("RANGEJOIN_TESTS", "full")

/** Whether this run is the fast or the smoke tier: small queries, sampled families. */
val shortTier: Boolean = Set("fast", "smoke")(testTier)

/**
 * The suites only `make test-all` (RANGEJOIN_TESTS=all) runs: Spark's suites of its own join
 * operators, which build the operators directly, not through the planner, so that rangejoin can
 * take none of their joins (docs/semantics.md, "Spark's own join suites").
 */
val allTierOnly: Set[String] = Set("InnerJoinSuite", "OuterJoinSuite", "ExistenceJoinSuite")
  .map("rangejoin.spark." + _)

/**
 * The suites the second forked test JVM runs (see `Test / testGrouping`), chosen so that both
 * take about as long in the tier being run: the fast and smoke tiers' (RANGEJOIN_TESTS=fast or
 * smoke, the other lines in `make test`) are a handful of sampled families, the full tier's the
 * costliest suites.
 */
def secondTestGroup(suite: String): Boolean =
  (if (testTier == "smoke") Set(
    // The smoke lines share the differential suites' cases, the planning suite's tests and
    // the two costly unit loops' key types (SharedAcrossSmokeLines, Tier.acrossSmokeLines):
    // these balance the rest.
    "rangejoin.planning.RangeJoinPlanningSuite",
    "rangejoin.differential.FileScanDifferentialSuite",
    "rangejoin.differential.AsOfDifferentialSuite",
    "rangejoin.differential.BandDifferentialSuite",
    "rangejoin.execution.index.AsOfSearchSuite",
    "rangejoin.differential.KeyedDifferentialSuite",
    "rangejoin.differential.PlainDifferentialSuite")
  else if (shortTier) Set(
    "rangejoin.execution.index.SortedKeysSuite",
    "rangejoin.differential.FileScanDifferentialSuite",
    "rangejoin.differential.KeyedExistenceDifferentialSuite",
    "rangejoin.differential.AsOfDifferentialSuite",
    "rangejoin.differential.PlainDifferentialSuite")
  else Set(
    "rangejoin.differential.FileScanDifferentialSuite",
    "rangejoin.spark.SubquerySuite",
    "rangejoin.features.FastPathSuite",
    "rangejoin.differential.PlainDistributedSuite",
    "rangejoin.differential.BandDistributedSuite",
    "rangejoin.features.CodegenSuite",
    "rangejoin.differential.BinnedDistributedSuite",
    "rangejoin.differential.KeyedDistributedSuite",
    "rangejoin.differential.AsOfDistributedSuite",
    "rangejoin.features.BandJoinSuite",
    "rangejoin.differential.KeyedExistenceDifferentialSuite",
    "rangejoin.execution.index.SortedKeysSuite")).contains(suite)

/** The line's shim folders (SparkLines.shimDirs) under scala/src/<kind>/. */
def shimSources(base: File, kind: String): Seq[File] =
  sparkLine.shimDirs.map(d => base / "scala" / "src" / kind / d)

lazy val projectVersion: String = {
  val versionFile = file("python/rangejoin/_version.py")
  val Version = """__version__\s*=\s*"([^"]+)"""".r
  IO.readLines(versionFile).collectFirst { case l if Version.findFirstIn(l).isDefined =>
    Version.findFirstMatchIn(l).get.group(1)
  }.getOrElse(sys.error(s"no __version__ in $versionFile"))
}

/** The pyspark package folder (SPARK_HOME) whose jars/ holds the line's Spark. */
lazy val pysparkHome = settingKey[File]("the pyspark install that provides the line's Spark jars")

ThisBuild / organization := "io.rangejoin"
ThisBuild / version := projectVersion
ThisBuild / scalaVersion := sparkLine.scalaVersion

// Spark's own list (JavaModuleOptions) of the JDK internals it needs opened on Java 17.
val sparkJavaOptions = Seq(
  "-XX:+IgnoreUnrecognizedVMOptions",
  "--add-modules=jdk.incubator.vector",
  "--add-opens=java.base/java.lang=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
  "--add-opens=java.base/java.io=ALL-UNNAMED",
  "--add-opens=java.base/java.net=ALL-UNNAMED",
  "--add-opens=java.base/java.nio=ALL-UNNAMED",
  "--add-opens=java.base/java.util=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
  "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
  "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
  "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
  "-Djdk.reflect.useDirectMethodHandle=false",
  "-Dio.netty.tryReflectionSetAccessible=true",
  "-Dio.netty.allocator.type=pooled",
  "-Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE",
  "--enable-native-access=ALL-UNNAMED"
)

lazy val root = (project in file("."))
  .settings(
    // `line 4.1` switches this sbt session to another Spark line and reloads the build, so one
    // sbt run can build and test several lines (`make test` does, for those of one tier): the
    // build is not started again and the compiler is already warm (4.1's main sources compile
    // in 13 s after 4.0's, against 35 s in a new sbt).
    commands += Command.single("line") { (state, line) =>
      System.setProperty("rangejoin.spark", line)
      "reload" :: state
    },
    name := s"rangejoin-spark-${sparkLine.line}",
    moduleName := name.value, // as written: sbt's default would turn "4.3" into "4-3"
    // A target folder per line, so that building one line leaves the others' builds alone.
    target := baseDirectory.value / "target" / s"spark-${sparkLine.line}",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked",
      if (sparkLine.scalaBinary == "2.12") "-Ywarn-unused:imports,privates,locals"
      else "-Wunused:imports,privates,locals"),

    Compile / scalaSource := baseDirectory.value / "scala" / "src" / "main" / "scala",
    Compile / javaSource := baseDirectory.value / "scala" / "src" / "main" / "java",
    // javac first: scalac would refuse RangeJoinHint.java's subclassing of a sealed Spark class,
    // which the JVM allows (see that file).
    compileOrder := CompileOrder.JavaThenScala,
    // Scaladoc reads Java sources as scalac does, and refuses that file for the same reason: it
    // documents the Scala sources, reading the compiled Java class from the classpath.
    Compile / doc / sources := (Compile / doc / sources).value.filterNot(_.getName.endsWith(".java")),
    Compile / doc / dependencyClasspath := (Compile / fullClasspath).value,
    Compile / resourceDirectory := baseDirectory.value / "scala" / "src" / "main" / "resources",
    Test / scalaSource := baseDirectory.value / "scala" / "src" / "test" / "scala",
    // The line's shims (project/SparkLines.scala).
    Compile / unmanagedSourceDirectories ++= shimSources(baseDirectory.value, "main"),
    Test / unmanagedSourceDirectories ++= shimSources(baseDirectory.value, "test"),
    Test / resourceDirectory := baseDirectory.value / "scala" / "src" / "test" / "resources",

    pysparkHome := {
      val fromEnv = sys.env.get("RANGEJOIN_PYSPARK_HOME").map(file)
      def fromVenv = (baseDirectory.value / ".venv" / "lib").listFiles().toSeq
        .filter(_.getName.startsWith("python")).map(_ / "site-packages" / "pyspark")
        .find(_.isDirectory)
      // The default line's Spark is .venv's pyspark, as `make venv` installs it; every other
      // line's is the one `build/pyspark-home <version>` installs under the home folder.
      def fromLine =
        if (sparkLine.line == SparkLines.default)
          Option(baseDirectory.value / ".venv" / "lib").filter(_.isDirectory).flatMap(_ => fromVenv)
        else Some(sparkLine.cachedPysparkHome).filter(_.isDirectory)
      fromEnv.orElse(fromLine).getOrElse(sys.error(
        s"Spark $sparkVersion not found: " + (
          if (sparkLine.line == SparkLines.default)
            s"run `make venv` (it installs pyspark==$sparkVersion into .venv)"
          else s"run `build/pyspark-home $sparkVersion` (it installs pyspark==$sparkVersion " +
            s"into ${sparkLine.cachedPysparkHome.getParent})") +
        s", or point RANGEJOIN_PYSPARK_HOME at a pyspark $sparkVersion package folder"))
    },
    // Spark is provided: on the compile and test classpaths, never in the jar or the pom.
    Compile / unmanagedJars ++= {
      val jars = (pysparkHome.value / "jars" * "*.jar").classpath
      val core = jars.map(_.data.getName).find(_.startsWith("spark-core_"))
      if (!core.contains(s"spark-core_${sparkLine.scalaBinary}-$sparkVersion.jar")) sys.error(
        s"${pysparkHome.value} does not hold Spark $sparkVersion (found ${core.getOrElse("no spark-core")})")
      jars
    },
    autoScalaLibrary := false,
    libraryDependencies ++= Seq(
      "org.scala-lang" % "scala-library" % scalaVersion.value % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ) ++ Seq("spark-core", "spark-catalyst", "spark-sql").map { m =>
      ("org.apache.spark" %% m % sparkTestJarsVersion % Test classifier "tests").intransitive()
    },

    // rangejoin.BuildInfo: the versions the extension reports (its own, and the Spark it is for).
    Compile / sourceGenerators += Def.task {
      val out = (Compile / sourceManaged).value / "rangejoin" / "BuildInfo.scala"
      IO.write(out,
        s"""|package rangejoin
            |
            |/** Generated by build.sbt: the versions of this build. */
            |object BuildInfo {
            |  val version: String = "${version.value}"
            |  val sparkVersion: String = "$sparkVersion"
            |}
            |""".stripMargin)
      Seq(out)
    }.taskValue,

    Test / fork := true,
    // Groups of suites (below) in parallel, each group's suites one after another in its JVM.
    Test / parallelExecution := true,
    Test / testForkedParallel := false,
    // Two test JVMs side by side: suites spend much of their time waiting (planning, task
    // scheduling, local-cluster executors, file writes), and one JVM holds one SparkContext at a
    // time. The second group is the heaviest suites, about half the total time as measured by a
    // full run's test reports (target/test-reports); every other suite is in the first.
    Test / testGrouping := {
      val options = (Test / forkOptions).value
      val (second, first) = (Test / definedTests).value.partition(t => secondTestGroup(t.name))
      Seq("first" -> first, "second" -> second).filter(_._2.nonEmpty).map { case (name, tests) =>
        Tests.Group(name, tests, Tests.SubProcess(options))
      }
    },
    Global / concurrentRestrictions := Seq(
      Tags.limitAll(math.max(2, java.lang.Runtime.getRuntime.availableProcessors)),
      Tags.limit(Tags.ForkedTestGroup, 2),
      Tags.exclusiveGroup(Tags.Clean)),
    // The JIT's first tier only, in every tier: thousands of small queries, each planned and
    // compiled once, never pay back the optimizing compiler. The local-cluster executors inherit
    // it (ClusterDifferentialSession). Alone, suites spend a tenth to 45% less CPU; in a whole
    // `make test` the saving did not show beyond the machine's drift (docs/design.md, Tests).
    Test / javaOptions += "-XX:TieredStopAtLevel=1",
    Test / javaOptions ++= sparkJavaOptions ++ Seq(
      "-Xmx4g", "-XX:+UseParallelGC",
      "-Dspark.testing=true",
      // The test tier (rangejoin.differential.Tier): RANGEJOIN_TESTS=fast samples each differential
      // family (smoke: a third as many), full (the default) the costliest ones, all runs every case.
      s"-Drangejoin.tests=$testTier",
      s"-Dspark.test.home=${pysparkHome.value}"),
    // local-cluster masters start executor JVMs from SPARK_HOME's jars.
    Test / envVars ++= Map(
      "SPARK_HOME" -> pysparkHome.value.getAbsolutePath,
      "SPARK_SCALA_VERSION" -> sparkLine.scalaBinary,
      "SPARK_TESTING" -> "1"),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF"),
    Test / testOptions ++= (if (testTier == "all") Nil else Seq(Tests.Filter(s => !allTierOnly(s)))),

    publishMavenStyle := true,
    // `make publish-m2` republishes the same version after every change.
    publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
    pomIncludeRepository := (_ => false),
    // The pom says what a user's build needs: the line's Spark, provided. Test-only dependencies
    // (the Spark test-jars among them) are nobody else's business.
    pomPostProcess := { pom =>
      import scala.xml._
      import scala.xml.transform._
      val sparkProvided = Seq("spark-core", "spark-catalyst", "spark-sql").map { m =>
        <dependency>
          <groupId>org.apache.spark</groupId>
          <artifactId>{m}_{sparkLine.scalaBinary}</artifactId>
          <version>{sparkVersion}</version>
          <scope>provided</scope>
        </dependency>
      }
      new RuleTransformer(new RewriteRule {
        override def transform(node: Node): Seq[Node] = node match {
          case d: Elem if d.label == "dependency" && (d \ "scope").text == "test" => Nil
          case d: Elem if d.label == "dependencies" => d.copy(child = d.child ++ sparkProvided)
          case other => other
        }
      }).transform(pom).head
    },
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0"))
  )
