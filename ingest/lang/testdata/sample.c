#include <stdio.h>

#define MAX 10
#define SQUARE(x) ((x) * (x))

/* A point. */
struct point {
	int x, y;
};

typedef struct {
	int w;
} size_t2;

enum color { RED, GREEN };

static int counter = 0;

int add(int a, int b);

/* Adds two numbers. */
int add(int a, int b)
{
	return a + b;
}

static char *name(void)
{
	return "x";
}

int main(void)
{
	printf("%d\n", add(1, SQUARE(2)));
	return 0;
}
