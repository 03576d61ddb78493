package com.example;

import java.util.List;

/**
 * A shape.
 */
public class Shape<T extends Comparable<T>> implements Drawable {
    private final int sides;

    /** Makes one. */
    public Shape(int sides) {
        this.sides = sides;
    }

    @Override
    public String draw() {
        return format(sides);
    }

    static class Inner {
        void deep() {
            System.out.println("x");
        }
    }

    enum Kind {
        ROUND, SQUARE;

        boolean round() { return this == ROUND; }
    }
}

interface Drawable {
    String draw();
}

record Pair<A, B>(A first, B second) {
    A left() { return first; }
}
