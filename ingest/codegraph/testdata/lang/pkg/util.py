def normalize(s):
    return s.strip().lower()


def unused():
    return 0
