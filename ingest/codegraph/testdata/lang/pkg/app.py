from .util import normalize
from . import util


class Parser:
    def parse(self, text):
        return self.clean(text)

    def clean(self, text):
        return normalize(text)


def main(argv):
    p = Parser()
    util.unused()
    return p.parse(argv[0])
