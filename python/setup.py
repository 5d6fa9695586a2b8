"""setup.py -- `pip install ./python` after the build: the stepformer package, and libstepformer.so
copied beside it (from $STEPFORMER_LIB, else ../build/libstepformer.so) so that the installed
package finds its library without a checkout. Pure setuptools (Debian's python3-setuptools), no
pyproject.toml: pip then builds in this environment and needs no network (an isolated build would
fetch setuptools from an index)."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class build_py_with_lib(build_py):
    def run(self):
        super().run()
        lib = os.environ.get("STEPFORMER_LIB") or os.path.join(HERE, "..", "build", "libstepformer.so")
        if os.path.isdir(lib):
            lib = os.path.join(lib, "libstepformer.so")
        if os.path.exists(lib):
            dest = os.path.join(self.build_lib, "stepformer", "libstepformer.so")
            shutil.copyfile(os.path.realpath(lib), dest)
        else:
            print(f"stepformer: {lib} not found: the package will look for the library at run time "
                  "($STEPFORMER_LIB, build/, the system's)")


setup(
    name="stepformer",
    version="0.1",
    description="Every stage of a Transformer, its numbers and its pictures, in a notebook (libstepformer)",
    packages=["stepformer"],
    install_requires=["numpy"],
    python_requires=">=3.9",
    cmdclass={"build_py": build_py_with_lib},
    zip_safe=False,
)
