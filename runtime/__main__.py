import sys

from runtime import heap
from runtime.cli import main

heap.settle()  # a process of its own: what it imported lives as long as it does
sys.exit(main())
