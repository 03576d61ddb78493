"""Module docstring."""
import os

LIMIT = 10


def top(a, b):
    """Add two numbers."""
    return a + b


@dataclass
class Point(Base):
    """A point."""
    x: int = 0
    y = 1

    @property
    def norm(self):
        """Its length."""
        def helper():
            return 1
        return helper() + os.path.join("a", "b")

    class Inner:
        def deep(self):
            pass

    async def fetch(self):
        return await top(1, 2)


# A comment on lambda.
square = lambda x: x * x

if __name__ == "__main__":
    top(1, 2)
