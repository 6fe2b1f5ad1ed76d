import unittest

from slugify import slugify


class SlugifyTest(unittest.TestCase):
    def test_single_word(self):
        self.assertEqual(slugify("Hello"), "hello")

    def test_spaces_become_hyphens(self):
        self.assertEqual(slugify("hello world"), "hello-world")

    def test_runs_of_punctuation_collapse(self):
        self.assertEqual(slugify("Hello,  World!"), "hello-world")

    def test_accents_are_dropped(self):
        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")


if __name__ == "__main__":
    unittest.main()
