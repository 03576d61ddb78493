#include <vector>

namespace geo {

/// A shape.
class Shape {
public:
    Shape(int n) : n_(n) {}
    virtual ~Shape() = default;
    virtual double area() const;

    int sides() const {
        return n_;
    }

private:
    int n_;
};

template <typename T>
struct Box {
    T value;
    T get() const { return value; }
};

double Shape::area() const {
    return compute(n_);
}

}  // namespace geo

template <typename T>
T maxOf(T a, T b) {
    return a > b ? a : b;
}

#define LOG(x) print(x)

int main() {
    geo::Shape s(3);
    return s.sides();
}

struct CompactionState {
  // Files produced by compaction
  struct Output {
    int number;
  };

 private:
  // Sequence of option configurations to try
  enum OptionConfig { kDefault, kReuse };
};
