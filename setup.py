"""The compiled parts of kafkamock, both optional: the record framing walk (kafkamock/records/_framing.c) and the
message decoder (kafkamock/codec/_decode.c). Where no C compiler is found the build goes on without them and
kafkamock runs their Python twins (kafkamock/records/framing.py, the generated decoders). Everything else about the
package is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kafkamock.records._framing", ["kafkamock/records/_framing.c"], optional=True),
                   Extension("kafkamock.codec._decode", ["kafkamock/codec/_decode.c"], optional=True)])
