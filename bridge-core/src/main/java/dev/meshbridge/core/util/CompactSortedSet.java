package dev.meshbridge.core.util;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * An immutable set in its elements' natural order, stored as one sorted array. The catalog holds one set of sources
 * per service, and the aggregator one set of registry shards per host, nearly always of one element, where a
 * {@link TreeSet} costs about 100 bytes (the set, its map and one entry; 130 with an unmodifiable wrapper) against
 * about 40 here: some 10 MB each at 100,000 services. A change makes a new set ({@link #with}, {@link #without}).
 *
 * @param <E> the element type, compared by its natural order
 */
public final class CompactSortedSet<E extends Comparable<? super E>> extends AbstractSet<E> implements SortedSet<E> {

    private static final CompactSortedSet<?> EMPTY = new CompactSortedSet<>(new Comparable<?>[0]);

    private final Object[] elements;

    private CompactSortedSet(Object[] elements) {
        this.elements = elements;
    }

    @SuppressWarnings("unchecked")
    public static <E extends Comparable<? super E>> CompactSortedSet<E> empty() {
        return (CompactSortedSet<E>) EMPTY;
    }

    /**
     * A copy of {@code elements} in natural order, duplicates dropped (returned as is when it already is one); null
     * elements are refused.
     */
    @SuppressWarnings("unchecked")
    public static <E extends Comparable<? super E>> CompactSortedSet<E> copyOf(Collection<? extends E> elements) {
        if (elements instanceof CompactSortedSet<?> c) return (CompactSortedSet<E>) c;
        if (elements.isEmpty()) return empty();
        if (elements.size() == 1) {
            E only = elements.iterator().next();
            if (only == null) throw new NullPointerException("null element");
            return new CompactSortedSet<>(new Object[] {only});
        }
        // a TreeSet sorts, drops duplicates and refuses nulls
        return new CompactSortedSet<>(new TreeSet<E>(elements).toArray());
    }

    /** This set and {@code e}: this one when it holds {@code e} already, else a new set. */
    public CompactSortedSet<E> with(E e) {
        int i = indexOf(e);
        if (i >= 0) return this;
        int at = -(i + 1);
        Object[] out = new Object[elements.length + 1];
        System.arraycopy(elements, 0, out, 0, at);
        out[at] = e;
        System.arraycopy(elements, at, out, at + 1, elements.length - at);
        return new CompactSortedSet<>(out);
    }

    /** This set without {@code e}: this one when it does not hold {@code e}, else a new set. */
    public CompactSortedSet<E> without(E e) {
        int at = indexOf(e);
        if (at < 0) return this;
        if (elements.length == 1) return empty();
        Object[] out = new Object[elements.length - 1];
        System.arraycopy(elements, 0, out, 0, at);
        System.arraycopy(elements, at + 1, out, at, elements.length - at - 1);
        return new CompactSortedSet<>(out);
    }

    @SuppressWarnings("unchecked")
    private E at(int i) {
        return (E) elements[i];
    }

    /** Where {@code e} is, or {@code -(insertion point) - 1}. */
    @SuppressWarnings("unchecked")
    private int indexOf(E e) {
        if (e == null) throw new NullPointerException("null element");
        int lo = 0;
        int hi = elements.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = ((E) elements[mid]).compareTo(e);
            if (c < 0) lo = mid + 1;
            else if (c > 0) hi = mid - 1;
            else return mid;
        }
        return -(lo + 1);
    }

    /** The index of the first element not below {@code e}. */
    private int ceilingIndex(E e) {
        int i = indexOf(e);
        return i >= 0 ? i : -(i + 1);
    }

    private CompactSortedSet<E> range(int from, int to) {
        if (from == 0 && to == elements.length) return this;
        if (from >= to) return empty();
        return new CompactSortedSet<>(Arrays.copyOfRange(elements, from, to));
    }

    @Override
    public int size() {
        return elements.length;
    }

    @Override
    @SuppressWarnings("unchecked")
    public boolean contains(Object o) {
        if (o == null) throw new NullPointerException("null element");
        if (elements.length == 0) return false;
        // as a TreeSet does: an object of another type fails the comparison
        return indexOf((E) o) >= 0;
    }

    @Override
    public Iterator<E> iterator() {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < elements.length;
            }

            @Override
            public E next() {
                if (next >= elements.length) throw new NoSuchElementException();
                return at(next++);
            }
        };
    }

    @Override
    public Object[] toArray() {
        return elements.clone();
    }

    /** Null: the natural order. */
    @Override
    public Comparator<? super E> comparator() {
        return null;
    }

    @Override
    public E first() {
        if (elements.length == 0) throw new NoSuchElementException();
        return at(0);
    }

    @Override
    public E last() {
        if (elements.length == 0) throw new NoSuchElementException();
        return at(elements.length - 1);
    }

    /** The elements from {@code fromElement} (inclusive) to {@code toElement} (exclusive), as a set of their own. */
    @Override
    public SortedSet<E> subSet(E fromElement, E toElement) {
        if (fromElement.compareTo(toElement) > 0) {
            throw new IllegalArgumentException("fromElement " + fromElement + " > toElement " + toElement);
        }
        return range(ceilingIndex(fromElement), ceilingIndex(toElement));
    }

    /** The elements below {@code toElement}, as a set of their own. */
    @Override
    public SortedSet<E> headSet(E toElement) {
        return range(0, ceilingIndex(toElement));
    }

    /** The elements from {@code fromElement} on, as a set of their own. */
    @Override
    public SortedSet<E> tailSet(E fromElement) {
        return range(ceilingIndex(fromElement), elements.length);
    }
}
