"""Bundles the checkout's library into the package when it was built.

`pip install ./python` after `make lib` installs wavec together with
build/release/libwavec.so, so that the installed package needs neither the
checkout nor WAVEC_LIB; without a built library it installs the pure Python
package, which then finds the library through WAVEC_LIB.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        lib = os.environ.get("WAVEC_LIB") or os.path.join(here, "..", "build", "release", "libwavec.so")
        if os.path.isfile(lib):
            dest = os.path.join(self.build_lib, "wavec", "libwavec.so")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(lib, dest)


setup(cmdclass={"build_py": BuildWithLibrary})
