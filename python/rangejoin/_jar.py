"""Where the rangejoin jar is: bundled in the wheel, or published under a Maven coordinate."""

from pathlib import Path

from rangejoin._version import __version__

#: The Scala binary version the jar is built for; it must match the Spark it runs in.
SCALA_BINARY_VERSION = "2.13"

#: The jar's Maven coordinate, for ``spark.jars.packages`` or ``spark-submit --packages``.
MAVEN_COORDINATE = f"io.rangejoin:rangejoin-spark_{SCALA_BINARY_VERSION}:{__version__}"

_JAR_NAME = f"rangejoin-spark_{SCALA_BINARY_VERSION}-{__version__}.jar"


def jar_path() -> str:
    """Return the absolute path of the rangejoin jar bundled in this package.

    The wheel carries the jar as package data (``rangejoin/jars/``); a source checkout has it
    only after ``make wheel`` (or ``make install``) has copied it there.

    Returns
    -------
    str
        The absolute path of ``rangejoin-spark_2.13-<version>.jar``.

    Raises
    ------
    FileNotFoundError
        If the jar is not in the package, e.g. when :mod:`rangejoin` is imported from a source
        checkout that has not been built.
    """
    path = Path(__file__).resolve().parent / "jars" / _JAR_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"The rangejoin jar {_JAR_NAME} is not in the rangejoin package (looked for {path}). "
            "An installed spark-rangejoin wheel always has it; a source checkout has it only "
            "after `make wheel` (or `make install`, which installs the wheel). Alternatively, "
            f"leave the jar to Spark with spark.jars.packages={MAVEN_COORDINATE}."
        )
    return str(path)
