# The one place the project version is written: build.sbt and pyproject.toml both read it.
__version__ = "0.1.0"
