"""The one compiled part of kafkamock: the record framing walk (kafkamock/records/_framing.c). Optional: where no C
compiler is found the build goes on without it and kafkamock runs its Python twin (kafkamock/records/framing.py).
Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kafkamock.records._framing", ["kafkamock/records/_framing.c"], optional=True)])
