"""Courses: a generator plus ordered components, one bind, one regeneration body."""

from track_gen.course.config import CourseConfig
from track_gen.course.context import ComponentContext
from track_gen.course.course import Course
from track_gen.course.result import StepResult

__all__ = ["ComponentContext", "Course", "CourseConfig", "StepResult"]
