#include "buf.h"

int main(void) {
	return buf_len("abc");
}
