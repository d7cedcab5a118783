"""Engines: drivers that cut a scan's inputs into records or blocks of lines, feed them to a
``core.accumulator.Accumulator`` (one process, ``--jobs`` worker processes, Spark, Ray or a
datatrove pipeline), merge the parts and leave the rest to ``Scanner.finish``."""
