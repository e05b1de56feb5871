"""``python -m gpuprims.bench``: see the package's docstring."""
from .cli import main

main()
