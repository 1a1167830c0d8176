"""Parse every *.yaml under a directory with rapidyaml, one process, one core: the floor `roce lint` is
measured against (issue 33). Each file is read and parsed into a ryml tree, every document of it."""
import glob
import sys

import ryml

for path in glob.glob(sys.argv[1] + "/**/*.yaml", recursive=True):
    with open(path, "rb") as f:
        ryml.parse_in_arena(f.read())
