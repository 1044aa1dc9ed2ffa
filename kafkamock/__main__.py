"""``python -m kafkamock``: the ``kafkamock`` command."""

from kafkamock.cli import main

main()
