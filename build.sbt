// rangejoin: fast range (inequality) joins for Apache Spark.
//
// Spark 4.3.0 is compiled against, and tested with, the jars that PyPI's pyspark==4.3.0 ships
// (its pyspark/jars folder): that is the release rangejoin targets, and the Makefile installs it
// into .venv before sbt runs. Spark is never packaged or listed in the pom: it is `provided` by
// whatever Spark the user runs.

import java.nio.file.Files
import scala.jdk.CollectionConverters._

val sparkVersion = "4.3.0"
// The newest Spark test-jars (QueryTest, SharedSparkSession, Spark's own join suites) that
// Maven Central has; they run against the 4.3.0 runtime above.
val sparkTestJarsVersion = "4.2.0"

/** The suites the second forked test JVM runs (see `Test / testGrouping`). */
def secondTestGroup(suite: String): Boolean = Set(
  "rangejoin.differential.FileScanDifferentialSuite",
  "rangejoin.spark.SubquerySuite",
  "rangejoin.features.FastPathSuite",
  "rangejoin.differential.PlainDistributedSuite",
  "rangejoin.differential.BandDistributedSuite",
  "rangejoin.features.CodegenSuite",
  "rangejoin.differential.KeyedExistenceDistributedSuite",
  "rangejoin.differential.BinnedDistributedSuite",
  "rangejoin.differential.KeyedDistributedSuite").contains(suite)

lazy val projectVersion: String = {
  val versionFile = file("python/rangejoin/_version.py")
  val Version = """__version__\s*=\s*"([^"]+)"""".r
  IO.readLines(versionFile).collectFirst { case l if Version.findFirstIn(l).isDefined =>
    Version.findFirstMatchIn(l).get.group(1)
  }.getOrElse(sys.error(s"no __version__ in $versionFile"))
}

/** The pyspark package folder (SPARK_HOME) whose jars/ holds Spark 4.3.0. */
lazy val pysparkHome = settingKey[File]("pyspark==4.3.0 install that provides Spark's jars")

ThisBuild / organization := "io.rangejoin"
ThisBuild / version := projectVersion
ThisBuild / scalaVersion := "2.13.18"

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
    name := "rangejoin-spark",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked",
      "-Wunused:imports,privates,locals"),

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
    Test / resourceDirectory := baseDirectory.value / "scala" / "src" / "test" / "resources",

    pysparkHome := {
      val fromEnv = sys.env.get("RANGEJOIN_PYSPARK_HOME").map(file)
      def fromVenv = (baseDirectory.value / ".venv" / "lib").listFiles().toSeq
        .filter(_.getName.startsWith("python")).map(_ / "site-packages" / "pyspark")
        .find(_.isDirectory)
      fromEnv.orElse(Option(baseDirectory.value / ".venv" / "lib").filter(_.isDirectory)
        .flatMap(_ => fromVenv)).getOrElse(sys.error(
        "Spark 4.3.0 not found: run `make venv` (it installs pyspark==4.3.0 into .venv), " +
        "or point RANGEJOIN_PYSPARK_HOME at a pyspark 4.3.0 package folder"))
    },
    // Spark is provided: on the compile and test classpaths, never in the jar or the pom.
    Compile / unmanagedJars ++= {
      val jars = (pysparkHome.value / "jars" * "*.jar").classpath
      val core = jars.map(_.data.getName).find(_.startsWith("spark-core_2.13-"))
      if (!core.contains(s"spark-core_2.13-$sparkVersion.jar")) sys.error(
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
    Test / javaOptions ++= sparkJavaOptions ++ Seq(
      "-Xmx4g", "-XX:+UseParallelGC",
      "-Dspark.testing=true",
      // The test tier (rangejoin.differential.Tier): RANGEJOIN_TESTS=fast samples each differential family.
      s"-Drangejoin.tests=${sys.env.getOrElse("RANGEJOIN_TESTS", "full")}",
      s"-Dspark.test.home=${pysparkHome.value}"),
    // local-cluster masters start executor JVMs from SPARK_HOME's jars.
    Test / envVars ++= Map(
      "SPARK_HOME" -> pysparkHome.value.getAbsolutePath,
      "SPARK_SCALA_VERSION" -> "2.13",
      "SPARK_TESTING" -> "1"),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF"),

    publishMavenStyle := true,
    // `make publish-m2` republishes the same version after every change.
    publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
    pomIncludeRepository := (_ => false),
    // The pom says what a user's build needs: Spark 4.3.0, provided. Test-only dependencies (the
    // 4.2.0 test-jars among them) are nobody else's business.
    pomPostProcess := { pom =>
      import scala.xml._
      import scala.xml.transform._
      val sparkProvided = Seq("spark-core", "spark-catalyst", "spark-sql").map { m =>
        <dependency>
          <groupId>org.apache.spark</groupId>
          <artifactId>{m}_2.13</artifactId>
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
