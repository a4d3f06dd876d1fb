"""Where the rangejoin jar is: bundled in the wheel, or published under a Maven coordinate.

rangejoin is built once per Spark line (feature release): the wheel carries one jar per line,
and the jar for the installed pyspark's line is the one used.
"""

from pathlib import Path
from typing import Optional

from rangejoin._version import __version__

#: The Spark lines rangejoin is built for (major.minor), each with the Scala binary version of its
#: jar, which is that Spark release's own: the jar must match the Spark it runs in.
SPARK_LINES = {"3.5": "2.12", "4.0": "2.13", "4.1": "2.13", "4.2": "2.13", "4.3": "2.13"}

#: The line assumed when no pyspark is installed (or an unsupported one is): the newest.
_DEFAULT_LINE = "4.3"


class UnsupportedSparkVersionError(RuntimeError):
    """The installed pyspark is of a Spark line rangejoin is not built for."""


def _installed_pyspark_version() -> Optional[str]:
    """The installed pyspark's version, or None when there is none."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("pyspark")
    except PackageNotFoundError:
        pass
    try:  # pyspark from SPARK_HOME/python, without package metadata
        from pyspark.version import __version__ as pyspark_version

        return pyspark_version
    except ImportError:
        return None


def _line_of(spark_version: str) -> str:
    return ".".join(spark_version.split(".")[:2])


def spark_line(spark_version: Optional[str] = None) -> str:
    """Return the Spark line (``"3.5"``, ... ``"4.3"``) of ``spark_version``, by default the
    installed pyspark's.

    Raises
    ------
    UnsupportedSparkVersionError
        If that Spark is not of a line rangejoin is built for, or no pyspark is installed.
    """
    if spark_version is None:
        spark_version = _installed_pyspark_version()
        if spark_version is None:
            raise UnsupportedSparkVersionError(
                "pyspark is not installed: rangejoin needs pyspark of one of the Spark lines it is "
                f"built for: {', '.join(SPARK_LINES)}."
            )
    line = _line_of(spark_version)
    if line not in SPARK_LINES:
        raise UnsupportedSparkVersionError(
            f"rangejoin {__version__} is not built for Spark {spark_version} (the installed "
            f"pyspark): it has jars for Spark {', '.join(SPARK_LINES)} only. Install pyspark of "
            "one of those lines, e.g. pip install 'pyspark==4.3.*'."
        )
    return line


def _artifact(line: str) -> str:
    return f"rangejoin-spark-{line}_{SPARK_LINES[line]}"


def maven_coordinate(line: Optional[str] = None) -> str:
    """Return the Maven coordinate of rangejoin's jar for a Spark ``line`` (default: the installed
    pyspark's), for ``spark.jars.packages`` or ``spark-submit --packages``."""
    line = spark_line() if line is None else spark_line(line)
    return f"io.rangejoin:{_artifact(line)}:{__version__}"


def _installed_line_or_default() -> str:
    try:
        return spark_line()
    except UnsupportedSparkVersionError:
        return _DEFAULT_LINE


_LINE = _installed_line_or_default()

#: The Scala binary version of the jar for the installed pyspark's line (2.12 for Spark 3.5).
SCALA_BINARY_VERSION = SPARK_LINES[_LINE]

#: The Maven coordinate of the jar for the installed pyspark's line (of Spark 4.3's when pyspark
#: is missing or of a line rangejoin is not built for).
MAVEN_COORDINATE = maven_coordinate(_LINE)


def jar_path(line: Optional[str] = None) -> str:
    """Return the absolute path of the rangejoin jar bundled in this package for a Spark ``line``
    (``"3.5"``, ... ``"4.3"``), by default the installed pyspark's.

    The wheel carries every line's jar as package data (``rangejoin/jars/``); a source checkout
    has them only after ``make wheel`` (or ``make install``) has copied them there.

    Returns
    -------
    str
        The absolute path of ``rangejoin-spark-<line>_<scala>-<version>.jar``.

    Raises
    ------
    UnsupportedSparkVersionError
        If the installed pyspark (or ``line``) is not of a Spark line rangejoin is built for; the
        message names it and the supported lines.
    FileNotFoundError
        If the jar is not in the package, e.g. when :mod:`rangejoin` is imported from a source
        checkout that has not been built.
    """
    line = spark_line() if line is None else spark_line(line)
    name = f"{_artifact(line)}-{__version__}.jar"
    path = Path(__file__).resolve().parent / "jars" / name
    if not path.is_file():
        raise FileNotFoundError(
            f"The rangejoin jar {name} is not in the rangejoin package (looked for {path}). "
            "An installed spark-rangejoin wheel always has it; a source checkout has it only "
            "after `make wheel` (or `make install`, which installs the wheel). Alternatively, "
            f"leave the jar to Spark with spark.jars.packages={maven_coordinate(line)}."
        )
    return str(path)
