int buf_len(const char *s);
